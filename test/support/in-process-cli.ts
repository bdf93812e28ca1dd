import { main } from '../../src/cli/main.js';

/** What a CLI run left: its exit code and both outputs. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process (a spawned one costs seconds), capturing what it writes to stdout and stderr;
 * `env` is set for the run and restored after it.
 */
export async function runInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const capture = (into: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      // A write's callback, wherever it is among the arguments: the writer may wait for it.
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof process.stdout.write;
  const [out, err] = [process.stdout.write, process.stderr.write];
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  process.stdout.write = capture(stdout);
  process.stderr.write = capture(stderr);
  let code: number;
  try {
    code = await main(args);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = undefined;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}
