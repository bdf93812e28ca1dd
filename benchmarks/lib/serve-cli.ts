import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { onTeardown } from './teardown.js';

/** `serve` of a built CLI on a free port, without the config server; its URL read from what it prints. */
export async function serve(cli: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--no-config'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /document interface: (\S+)\/document\/v1\//.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    async stop() {
      untrack();
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
