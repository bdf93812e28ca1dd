import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * In a process of its own, since vitest's may have loaded undici's root already: what loading the parts
 * brings in, and whether the dispatchers carry the request API the root would have given them.
 */
function probe(): { root: boolean; fetch: boolean; request: string; connector: string } {
  const script = `
    const parts = await import('./src/http/undici-parts.ts');
    const { createRequire } = await import('node:module');
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const pool = new parts.Pool('http://127.0.0.1:9');
    console.log(JSON.stringify({
      root: cache.some((k) => /undici[\\\\/]index\\.js$/.test(k)),
      fetch: cache.some((k) => /undici[\\\\/]lib[\\\\/]web[\\\\/]fetch/.test(k)),
      request: typeof pool.request,
      connector: typeof parts.buildConnector({}),
    }));
    await pool.close();`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' });
  return JSON.parse(out) as { root: boolean; fetch: boolean; request: string; connector: string };
}

describe('undici parts', () => {
  it('loads the dispatchers without undici\'s root (fetch, WebSocket, caches), with request() on them', () => {
    expect(probe()).toEqual({ root: false, fetch: false, request: 'function', connector: 'function' });
  });
});
