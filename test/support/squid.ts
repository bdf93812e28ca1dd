import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ensureDebianPackage } from './debian-package.js';

/**
 * Debian's squid as a forward proxy for tests: on 127.0.0.1 and a port of its own, in the foreground (`-N`: one
 * process, so a SIGKILL takes its connections with it), with its config, pid file, logs and hosts file in a temp
 * dir, and nothing cached. Installed with apt-get when missing. Several may run at once (two test files at a time).
 *
 * Use one per describe, never per test (a start costs about two seconds):
 *
 *     let squid: Squid;
 *     beforeAll(async () => { squid = await startSquid({ hosts: { 'vespa.test': '127.0.0.1' } }); }, 180_000);
 *     afterAll(() => squid?.stop());
 *
 * (180 s: the first start in a fresh CI machine installs squid.) Should afterAll never run, or the test process
 * die, a watchdog process kills squid and removes its dir when the test process's end closes its pipe.
 */
export interface SquidOptions {
  /**
   * Host names the proxy resolves itself (its hosts_file), e.g. { 'vespa.test': '127.0.0.1' }: a name only the
   * proxy knows proves the traffic went through it. `localhost` is 127.0.0.1 unless given here; squid asks no DNS.
   */
  hosts?: Record<string, string>;
  /** Require Basic proxy authentication with these credentials: 407 without them. */
  auth?: { user: string; password: string };
  /** Allow CONNECT only to these ports, 403 to others (default: any port, as tests' servers listen on random ones). */
  connectPorts?: number[];
  /** Fixed port (a restart comes back on the same one anyway); default a free one. */
  port?: number;
}

export interface Squid {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /**
   * The access log's lines so far, one a transaction, as `METHOD URL STATUS USER`: `CONNECT vespa.test:8443 200 -`,
   * `GET http://vespa.test:8080/x 200 alice`, `CONNECT localhost:9 407 -`. Squid writes a line when the transaction
   * ends (a tunnel: when it closes), which may be after the client has seen its answer: wait with `waitForLog`.
   */
  accessLog(): Promise<string[]>;
  /** The access log's lines once one matches `pattern`; rejects with the lines so far if none does within 10 s. */
  waitForLog(pattern: RegExp): Promise<string[]>;
  /** SIGKILL: the proxy dies with its connections (a proxy that dies mid-feed). */
  kill(): Promise<void>;
  /** Starts it again, on the same port, after kill() or stop() (which removed its dir and logs: they start anew). */
  restart(): Promise<void>;
  /** Kills it as kill() does and removes its dir. */
  stop(): Promise<void>;
}

const squidBinary = '/usr/sbin/squid';
const ncsaAuth = '/usr/lib/squid/basic_ncsa_auth';
/** How long a start may take on a busy machine before it fails, quoting cache.log. */
const readyWithinMs = 30_000;

/** Squid started as root drops to the `proxy` user: the files it writes must be that user's to write. */
function proxyUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('proxy:'));
  if (line === undefined) throw new Error('squid runs as root and drops to the `proxy` user, but /etc/passwd has none');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** An htpasswd line with an APR1 (Apache MD5) hash, which basic_ncsa_auth reads. */
function htpasswdLine(user: string, password: string): string {
  const hash = execFileSync('openssl', ['passwd', '-apr1', '-stdin'], { input: password, timeout: 20_000 });
  return `${user}:${hash.toString().trim()}\n`;
}

function config(dir: string, port: number, options: SquidOptions): string {
  const f = (name: string) => join(dir, name);
  const lines = [
    `http_port 127.0.0.1:${port}`,
    `visible_hostname ${basename(dir)}`,
    `pid_filename ${f('squid.pid')}`,
    `cache_log ${f('cache.log')}`,
    `coredump_dir ${dir}`,
    // One line a transaction, easy to match: method, URL (host:port for CONNECT), status, user (- for none).
    'logformat vb %rm %ru %>Hs %un',
    `access_log stdio:${f('access.log')} vb`,
    'buffered_logs off',
    'logfile_rotate 0',
    // Log URLs whole: squid cuts the query off by default.
    'strip_query_terms off',
    // Nothing cached, nothing kept between runs.
    'cache deny all',
    'cache_mem 0 MB',
    'netdb_filename none',
    // Names from our hosts file only: CI has no DNS, and a name squid cannot resolve must fail fast.
    `hosts_file ${f('hosts')}`,
    'dns_nameservers 127.0.0.1',
    'dns_timeout 5 seconds',
    // No helpers that need privileges or the network.
    'pinger_enable off',
    // Pass requests on as the client sent them, bodies of any size, connections kept on both sides.
    'forwarded_for transparent',
    'via off',
    'request_body_max_size 0',
    'client_persistent_connections on',
    'server_persistent_connections on',
    'http_access deny !localhost',
  ];
  if (options.connectPorts !== undefined) {
    lines.push(
      `acl vb_connect_ports port ${options.connectPorts.join(' ')}`,
      'http_access deny CONNECT !vb_connect_ports',
    );
  }
  if (options.auth !== undefined) {
    lines.push(
      `auth_param basic program ${ncsaAuth} ${f('passwd')}`,
      'auth_param basic children 5 startup=1 idle=1',
      'auth_param basic realm vespa-bulk-test',
      'acl vb_authed proxy_auth REQUIRED',
      // A deny whose last ACL is proxy_auth answers 407 with a challenge.
      'http_access deny !vb_authed',
    );
  }
  lines.push('http_access allow localhost', 'http_access deny all');
  return `${lines.join('\n')}\n`;
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(none)';
  }
}

/** The readiness probe's path, whose (400) lines accessLog() leaves out. */
const probePath = '/vb-squid-ready';
const probeLine = `GET ${probePath} `;

/**
 * Whether squid on `port` answers an HTTP request (even a bad one gets an error page with `Server: squid`; a
 * listener of someone else's that took the port answers without it).
 */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(`GET ${probePath} HTTP/1.0\r\n\r\n`));
    socket.on('data', (chunk) => done(/^HTTP\/1\.[01] [^]*\r\nServer: squid/i.test(chunk.toString('latin1'))));
    socket.on('end', () => done(false));
  });
}

/** A running squid and the watchdog that kills it (and removes `dir`) if the test process dies first. */
interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  watchdog: ChildProcess;
}

function spawnSquid(dir: string, conf: string, output: string[]): Running {
  const child = spawn(squidBinary, ['-N', '-f', conf], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 50) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // The watchdog's stdin is a pipe from this process: its end (however this process ends) wakes `read`.
  const watchdog = spawn('sh', ['-c', 'read _; kill -9 "$0" 2>/dev/null; rm -rf "$1"', String(child.pid), dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  return { child, exited, watchdog };
}

/**
 * Kills the watchdog first (so it never kills a later process with a reused pid), then squid, and waits for its
 * end. Always SIGKILL: a SIGTERM stop takes squid a second or more even with shutdown_lifetime 0, and there is
 * nothing to save (the access log is written a line at a time; helpers end when squid's pipe to them closes).
 */
async function halt(running: Running): Promise<void> {
  running.watchdog.kill('SIGKILL');
  if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
  await running.exited;
}

/** Starts squid and resolves once it answers; rejects quoting cache.log if it exits or does not answer in time. */
async function startOnce(dir: string, conf: string, port: number): Promise<Running> {
  const output: string[] = [];
  const running = spawnSquid(dir, conf, output);
  const deadline = Date.now() + readyWithinMs;
  let exited = false;
  void running.exited.then(() => {
    exited = true;
  });
  while (!exited && Date.now() < deadline) {
    if (await answers(port)) return running;
    if (!exited) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const why = exited ? `exited (code ${running.child.exitCode})` : `did not answer within ${readyWithinMs / 1000} s`;
  await halt(running);
  const error = new Error(
    `squid on 127.0.0.1:${port} ${why}. cache.log ends:\n${tail(join(dir, 'cache.log'))}\n` +
      `its output ends:\n${output.join('').trimEnd().split('\n').slice(-5).join('\n') || '(none)'}`,
  );
  throw Object.assign(error, { portTaken: /Address already in use/.test(tail(join(dir, 'cache.log'), 100)) });
}

/** Writes squid's dir: hosts file, password file, config. Again on a restart after stop() removed it. */
function prepare(dir: string, port: number, options: SquidOptions): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755);
  const owner = proxyUser();
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const hosts = { localhost: '127.0.0.1', ...options.hosts };
  const hostsText = Object.entries(hosts).map(([name, ip]) => `${ip} ${name}\n`);
  writeFileSync(join(dir, 'hosts'), hostsText.join(''), { mode: 0o644 });
  if (options.auth !== undefined) {
    writeFileSync(join(dir, 'passwd'), htpasswdLine(options.auth.user, options.auth.password), { mode: 0o644 });
  }
  const conf = join(dir, 'squid.conf');
  writeFileSync(conf, config(dir, port, options), { mode: 0o644 });
  return conf;
}

export async function startSquid(options: SquidOptions = {}): Promise<Squid> {
  ensureDebianPackage('squid', () => existsSync(squidBinary) && existsSync(ncsaAuth));
  const dir = mkdtempSync(join(tmpdir(), 'vb-squid-'));
  try {
    // A free port may be taken by another test between our look and squid's bind: then try another.
    let port = options.port ?? (await freePort());
    for (let attempt = 1; ; attempt++) {
      try {
        const running = await startOnce(dir, prepare(dir, port, options), port);
        return handle(dir, port, options, running);
      } catch (err) {
        if (!(err as { portTaken?: boolean }).portTaken || options.port !== undefined || attempt === 3) throw err;
        port = await freePort();
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function handle(dir: string, port: number, options: SquidOptions, first: Running): Squid {
  let running: Running | undefined = first;
  const accessLog = async (): Promise<string[]> => {
    try {
      return readFileSync(join(dir, 'access.log'), 'utf8')
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith(probeLine));
    } catch {
      return [];
    }
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    accessLog,
    async waitForLog(pattern) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const lines = await accessLog();
        if (lines.some((l) => pattern.test(l))) return lines;
        if (Date.now() > deadline)
          throw new Error(`no access log line matches ${pattern}; the lines:\n${lines.join('\n') || '(none)'}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async kill() {
      if (running !== undefined) await halt(running);
      running = undefined;
    },
    async restart() {
      if (running !== undefined) await halt(running);
      running = undefined;
      running = await startOnce(dir, prepare(dir, port, options), port);
    },
    async stop() {
      if (running !== undefined) await halt(running);
      running = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
