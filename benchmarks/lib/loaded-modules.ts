import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Every script file a process compiles while it runs (ESM and CommonJS alike, through tsx or not), as the
 * inspector reports them: a preload module listens for them and writes the list when the process exits.
 */
const probe = `
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const session = new Session();
session.connect();
const urls = new Set();
session.on('Debugger.scriptParsed', (m) => { if (m.params.url.startsWith('file:')) urls.add(m.params.url.replace(/[?#].*$/, '')); });
session.post('Debugger.enable');
process.on('exit', () => writeFileSync(process.env.VESPA_BULK_LOADED_MODULES, JSON.stringify([...urls].map((u) => fileURLToPath(u)))));
`;

export interface LoadedModules {
  /** The command's exit code. */
  code: number;
  /** Paths of the files it loaded: `node_modules/<package>/...` for packages, else relative to `root`. */
  files: string[];
}

/**
 * The files `node [nodeArgs] script args` loads, run in `cwd`; `root` shortens the paths. The probe itself and
 * its temporary folder are left out.
 */
export async function modulesLoadedBy(
  script: string,
  args: string[],
  options: { cwd: string; root: string; nodeArgs?: string[] },
): Promise<LoadedModules> {
  const dir = await mkdtemp(join(tmpdir(), 'vespa-bulk-loaded-'));
  try {
    const probeFile = join(dir, 'probe.mjs');
    const out = join(dir, 'loaded.json');
    await writeFile(probeFile, probe);
    const code = await new Promise<number>((resolve) => {
      execFile(
        process.execPath,
        [...(options.nodeArgs ?? []), '--import', pathToFileURL(probeFile).href, script, ...args],
        { cwd: options.cwd, env: { ...process.env, VESPA_BULK_LOADED_MODULES: out }, maxBuffer: 16 * 1024 * 1024 },
        (err) => {
          resolve(err ? (typeof err.code === 'number' ? err.code : 1) : 0);
        },
      );
    });
    const root = options.root.replace(/\\/g, '/').replace(/\/?$/, '/');
    const files = (JSON.parse(await readFile(out, 'utf8')) as string[])
      .map((f) => f.replace(/\\/g, '/'))
      .filter((f) => !f.startsWith(dir.replace(/\\/g, '/')))
      .map((f) => {
        const packages = f.lastIndexOf('/node_modules/');
        return packages >= 0 ? f.slice(packages + 1) : f.startsWith(root) ? f.slice(root.length) : f;
      });
    return { code, files };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The package a `node_modules/...` path lies in (`@scope/name` for a scoped one), or undefined for our own files. */
export function packageOf(file: string): string | undefined {
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  return m?.[1];
}
