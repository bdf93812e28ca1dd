import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/in-process-cli.js';

/** Refusals a new user meets first: each one line that says what to do, with the usage exit code. */
describe('small refusals through the CLI', () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('a target without a scheme is refused with the URL meant', async () => {
    const r = await runInProcess(['get', 'id:ns:music::1', '-t', '127.0.0.1:8080']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("target '127.0.0.1:8080'");
    expect(r.stderr).toContain('did you mean http://127.0.0.1:8080?');
  });

  it('a target that is no host:port gets no such suggestion', async () => {
    const r = await runInProcess(['get', 'id:ns:music::1', '-t', 'nonsense']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('did you mean');
  });

  it('delete-where without --selection says only its usage error, no progress line', async () => {
    // Nothing listens here: the refusal comes before anything is asked of the service.
    const r = await runInProcess(['delete-where', 'ns/music', '-t', `http://127.0.0.1:${busyPort}`]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'vespa-bulk: delete-where needs --selection; to delete every document of the type, say so with --selection true',
    ]);
    expect(r.stdout).toBe('');
  });

  it('serve on a busy port says so in one line, naming the port and the flag, exit 2', async () => {
    const r = await runInProcess(['serve', '--port', String(busyPort), '--no-config']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${busyPort}`);
    expect(lines[0]).toContain('is in use');
    expect(lines[0]).toContain('--port');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('serve with the config port busy names --config-port', async () => {
    const r = await runInProcess(['serve', '--port', '0', '--config-port', String(busyPort)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`127.0.0.1:${busyPort}`);
    expect(r.stderr).toContain('--config-port');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
