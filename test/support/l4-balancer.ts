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
  close(): Promise<void>;
}

export async function startL4Balancer(backendPorts: number[]): Promise<L4Balancer> {
  const placed = backendPorts.map(() => 0);
  const up = backendPorts.map(() => true);
  const sockets = backendPorts.map(() => new Set<net.Socket>());
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const set of sockets) for (const s of set) s.destroy();
        server.close(() => resolve());
      }),
  };
}
