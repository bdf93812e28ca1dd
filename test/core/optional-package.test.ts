import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOptional } from '../../src/core/optional-package.js';

/**
 * parquet-wasm and apache-arrow are optional peers (package.json): where they are not installed, reading
 * Parquet says how to add them. The import is made by plain Node from a folder with no node_modules above it,
 * as it fails for a user who has not added them (vitest's own resolver would find the project's).
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vespa-bulk-optional-'));
  const source = pathToFileURL(join(import.meta.dirname, '../../src/core/optional-package.ts')).href;
  await writeFile(
    join(dir, 'broken.mjs'),
    "throw Object.assign(new Error('parquet-wasm failed to start'), { code: 'ERR_OTHER' });\n",
  );
  await writeFile(
    join(dir, 'probe.mjs'),
    `import { importOptional } from '${source}';
const load = process.argv[2] === 'missing' ? () => import('parquet-wasm') : () => import('./broken.mjs');
await importOptional('parquet-wasm', load, ['parquet-wasm', 'apache-arrow']).catch((e) => process.stdout.write(JSON.stringify({ code: e.code, name: e.name, message: e.message })));
`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function probe(which: 'missing' | 'broken'): Promise<{ code: string; name: string; message: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(dir, 'probe.mjs'), which],
      { cwd: join(import.meta.dirname, '../..') },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as { code: string; name: string; message: string });
      },
    );
  });
}

describe('importOptional', () => {
  it('turns a package that is not installed into VB_MISSING_PACKAGE naming the install commands and versions', async () => {
    const err = await probe('missing');
    expect(err.code).toBe('VB_MISSING_PACKAGE');
    expect(err.message).toContain('reading Parquet needs parquet-wasm and apache-arrow');
    expect(err.message).toContain("'npm i -g parquet-wasm@^0.8.0 apache-arrow@^21.2.0'");
    expect(err.message).toContain("'npm i parquet-wasm@^0.8.0 apache-arrow@^21.2.0'");
    expect(err.message).toContain('npx -p vespa-bulk -p parquet-wasm -p apache-arrow vespa-bulk');
  });

  it('passes on any other failure of the import as it is', async () => {
    const err = await probe('broken');
    expect(err).toEqual({ code: 'ERR_OTHER', name: 'Error', message: 'parquet-wasm failed to start' });
  });

  it('returns the module where it is installed', async () => {
    const arrow = await importOptional('apache-arrow', () => import('apache-arrow'));
    expect(typeof arrow.tableFromIPC).toBe('function');
  });
});
