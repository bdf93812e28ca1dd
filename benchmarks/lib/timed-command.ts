import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** What one command took. */
export interface Timing {
  cpu: number;
  wall: number;
}

/** One run of `argv` under bash's `time`: CPU (user + sys, the command and its children) and wall, seconds. */
export function timed(argv: string[], cwd: string): Timing {
  const r = spawnSync(
    'bash',
    [
      '-c',
      'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>"$VESPA_BULK_STARTUP_ERR"; s=$?; [ $s -eq 0 ] || echo "exit $s" >&2',
      'bash',
      ...argv,
    ],
    {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, VESPA_BULK_STARTUP_ERR: join(cwd, 'last-stderr.txt') },
    },
  );
  const m = /(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)\s*$/.exec(r.stderr.replace(/exit \d+\s*$/, '').trim());
  if (r.status !== 0 || m === null || /exit \d+/.test(r.stderr))
    throw new Error(`${argv.join(' ')} failed in ${cwd}: ${r.stderr}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]) };
}
