import { BlockList, isIP } from 'node:net';

/**
 * A NO_PROXY list, as curl 8 reads it, with Go's `host:port`: entries separated by commas or white space; `*` alone
 * matches every host; a name matches itself and its subdomains (a leading `.` or `*.` is dropped first, so
 * `.example.com` matches `example.com` too); an IP address or CIDR range matches addresses as written, never a
 * name (no DNS); `host:port` only that port. Malformed entries are ignored, as curl ignores them.
 */
export interface NoProxyList {
  readonly all: boolean;
  readonly names: ReadonlyArray<{ name: string; port: number | undefined }>;
  readonly addresses: ReadonlyArray<{ block: BlockList; port: number | undefined }>;
}

export function parseNoProxy(value: string): NoProxyList {
  if (value.trim() === '*') return { all: true, names: [], addresses: [] };
  const entries = value.split(/[\s,]+/).filter((e) => e !== '');
  const names: Array<{ name: string; port: number | undefined }> = [];
  const addresses: Array<{ block: BlockList; port: number | undefined }> = [];
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (parsed === undefined) continue;
    if ('name' in parsed) names.push(parsed);
    else addresses.push(parsed);
  }
  return { all: false, names, addresses };
}

/** Whether a connection to `hostname` (as `URL.hostname` gives it, IPv6 in brackets or not) on `port` goes without the proxy. */
export function bypassesProxy(list: NoProxyList, hostname: string, port: number): boolean {
  if (list.all) return true;
  const host = unbracket(hostname);
  const family = isIP(host);
  if (family !== 0) {
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return list.addresses.some((a) => (a.port === undefined || a.port === port) && a.block.check(host, type));
  }
  const name = normaliseName(host);
  return list.names.some(
    (n) => (n.port === undefined || n.port === port) && (name === n.name || name.endsWith(`.${n.name}`)),
  );
}

type Entry = { name: string; port: number | undefined } | { block: BlockList; port: number | undefined };

function parseEntry(raw: string): Entry | undefined {
  let host = raw;
  let port: number | undefined;
  // [v6]:port, [v6], v4:port, name:port; a bare v6 address has colons of its own.
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  if (bracketed !== null) {
    host = bracketed[1];
    if (bracketed[2] !== undefined) port = portOf(bracketed[2]);
    if (bracketed[2] !== undefined && port === undefined) return undefined;
  } else if (raw.indexOf(':') === raw.lastIndexOf(':') && raw.includes(':')) {
    const at = raw.lastIndexOf(':');
    host = raw.slice(0, at);
    port = portOf(raw.slice(at + 1));
    if (port === undefined) return undefined;
  }
  const slash = host.indexOf('/');
  if (slash >= 0) {
    const address = host.slice(0, slash);
    const bits = host.slice(slash + 1);
    const family = isIP(address);
    if (family === 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return undefined;
    const block = new BlockList();
    block.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return { block, port };
  }
  const family = isIP(host);
  if (family !== 0) {
    const block = new BlockList();
    block.addAddress(host, family === 4 ? 'ipv4' : 'ipv6');
    return { block, port };
  }
  const name = normaliseName(host.replace(/^\*?\./, ''));
  if (name === '' || !/^[a-z0-9_.-]+$/.test(name)) return undefined;
  return { name, port };
}

function portOf(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
