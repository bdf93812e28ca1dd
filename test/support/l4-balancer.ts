import net, { type AddressInfo } from 'node:net';

/**
 * A layer-4 balancer of our own, for tests: a TCP proxy on loopback that places each new connection on the next
 * backend that is up, round-robin, and never moves it, as HAProxy in TCP mode or a cloud network balancer does
 * in front of a container cluster. `kill` takes a backend down as a killed process goes: its connections are cut
 * at once (no GOAWAY, nothing in progress answered) and new ones go elsewhere until `revive`. Bytes pass through
 * untouched, so any protocol works.
 */
export interface L4Balancer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Connections placed on each backend so far. */
  readonly placed: number[];
  /** Connections open to each backend now. */
  open(i: number): number;
  /** Cuts backend i's connections and places no new ones there. */
  kill(i: number): void;
  /** Places new connections on backend i again. */
  revive(i: number): void;
  /**
   * Backend i's connections open now stop passing bytes either way, neither closed nor reset (a GC pause of
   * minutes, a black-holed path): what the client sends is taken by the kernel and never answered. New connections
   * are placed as before.
   */
  silence(i: number): void;
  close(): Promise<void>;
}

export async function startL4Balancer(backendPorts: number[]): Promise<L4Balancer> {
  const placed = backendPorts.map(() => 0);
  const up = backendPorts.map(() => true);
  const sockets = backendPorts.map(() => new Set<net.Socket>());
  const pipes = new Map<net.Socket, net.Socket>();
  let next = 0;
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    let i = -1;
    for (let k = 0; k < backendPorts.length; k++) {
      const candidate = (next + k) % backendPorts.length;
      if (up[candidate]) {
        i = candidate;
        break;
      }
    }
    if (i < 0) {
      client.destroy();
      return;
    }
    next = (i + 1) % backendPorts.length;
    placed[i]++;
    const upstream = net.connect(backendPorts[i], '127.0.0.1');
    upstream.on('error', () => undefined);
    const pair = sockets[i];
    pair.add(client);
    pair.add(upstream);
    const cut = () => {
      pair.delete(client);
      pair.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', cut);
    upstream.on('close', cut);
    client.pipe(upstream);
    upstream.pipe(client);
    pipes.set(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    placed,
    open: (i) => sockets[i].size / 2,
    kill(i) {
      up[i] = false;
      // resetAndDestroy: the client sees the connection die, not end, as when the node's process is killed.
      for (const s of [...sockets[i]]) s.resetAndDestroy();
      sockets[i].clear();
    },
    revive(i) {
      up[i] = true;
    },
    silence(i) {
      for (const s of sockets[i]) {
        const upstream = pipes.get(s);
        if (upstream === undefined) continue;
        s.unpipe(upstream);
        upstream.unpipe(s);
        s.pause();
        upstream.pause();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const set of sockets) for (const s of set) s.destroy();
        server.close(() => resolve());
      }),
  };
}
