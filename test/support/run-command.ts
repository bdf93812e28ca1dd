import { execFile } from 'node:child_process';
import { cliArgs } from './cli-entry.js';

export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `vespa-bulk <args>` from this checkout's sources (see cliArgs), `input` on its stdin; resolves with the exit code and both outputs. */
export function runCommand(args: string[], input?: string): Promise<CommandRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...cliArgs(), ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}
