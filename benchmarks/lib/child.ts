import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/**
 * Runs a bench server in its own process, so the load generator and the server do not share an event loop
 * (on a 2-core machine that is the difference between measuring the server and measuring the scheduler).
 * The script prints `LISTENING <url>` on stdout when ready.
 */
export interface ChildServer {
  url: string;
  process: ChildProcess;
  /** Stops the child and returns its peak RSS in bytes, when it reported one. */
  stop(): Promise<number | undefined>;
}

const tsxLoader = fileURLToPath(import.meta.resolve('tsx'));

export async function startChildServer(
  script: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', tsxLoader, script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /LISTENING (\S+)/.exec(out);
      if (m) {
        child.stdout.off('data', onData);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  let rssLine = '';
  child.stdout.on('data', (chunk: Buffer) => (rssLine += chunk.toString()));
  return {
    url,
    process: child,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
      const m = /MAXRSS (\d+)/.exec(rssLine);
      return m ? Number(m[1]) : undefined;
    },
  };
}

/** For child scripts: print the ready line, and the peak RSS when told to stop. */
export function announce(url: string, onStop: () => Promise<void> | void = () => {}): void {
  process.stdout.write(`LISTENING ${url}\n`);
  const stop = async (): Promise<void> => {
    await onStop();
    process.stdout.write(`MAXRSS ${process.resourceUsage().maxRSS * 1024}\n`);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The element of `xs` whose `key` is nearest their median (a whole run, not a mix of runs' figures). */
export function medianBy<T>(xs: T[], key: (x: T) => number): T {
  const m = median(xs.map(key));
  return xs.reduce((a, b) => (Math.abs(key(b) - m) < Math.abs(key(a) - m) ? b : a));
}

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  process.stdout.write(`\n${title}\n`);
  const cols = Object.keys(rows[0] ?? {});
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(width[i])).join('  ');
  process.stdout.write(`${line(cols)}\n${line(width.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(cols.map((c) => String(r[c])))}\n`);
}
