import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * NO_PROXY, read as curl 8 reads it, with ports as Go's httpproxy reads them: entries separated by commas
 * and/or whitespace; `*` as the whole value bypasses the proxy for every host; a name matches itself and its
 * subdomains (a leading `.` or `*.` is dropped first); an IP address or CIDR range matches addresses only, a
 * name matches names only (no DNS, as curl); `host:port` and `[v6]:port` limit an entry to one port. A
 * malformed entry is ignored, as curl ignores it: one typo must not send everything through the proxy.
 */

/** An entry's port, undefined for every port. */
type Port = number | undefined;

interface NameEntry {
  /** Lower case, ASCII (punycode), no trailing dot. */
  name: string;
  port: Port;
}

interface AddressEntry {
  /** One address or one range; a BlockList compares addresses, not their spellings (`::0001` is `::1`). */
  range: BlockList;
  port: Port;
}

/** One NO_PROXY list, parsed. */
export interface NoProxyList {
  /** The value was `*`: no host takes the proxy. */
  readonly all: boolean;
  readonly names: readonly NameEntry[];
  readonly addresses: readonly AddressEntry[];
}

/** `[::1]` → `::1`; anything else as it is. */
function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function familyOf(address: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(address);
  if (version === 4) return 'ipv4';
  return version === 6 ? 'ipv6' : undefined;
}

/** A port in a NO_PROXY entry: 1-65535 in decimal digits, else undefined (the entry is then ignored). */
function portOf(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** `address` or `address/prefix` as a BlockList, or undefined when it is neither. */
function rangeOf(text: string): BlockList | undefined {
  const slash = text.indexOf('/');
  const address = unbracketed(slash < 0 ? text : text.slice(0, slash));
  const family = familyOf(address);
  if (family === undefined) return undefined;
  const range = new BlockList();
  if (slash < 0) {
    range.addAddress(address, family);
    return range;
  }
  const prefixText = text.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > (family === 'ipv4' ? 32 : 128)) return undefined;
  range.addSubnet(address, prefix, family);
  return range;
}

/** A host name as URL.hostname gives it: lower case, punycode, IPv4 in dotted decimal; one trailing dot dropped. */
function canonicalName(name: string): string {
  const ascii = domainToASCII(name);
  return ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
}

/** Splits `host:port` / `[v6]:port`; a bare IPv6 address (colons, no brackets) and a CIDR range have no port. */
function splitPort(entry: string): { host: string; port: Port; badPort: boolean } {
  const colon = entry.lastIndexOf(':');
  const bracketed = entry.startsWith('[');
  const portless = bracketed ? colon < entry.indexOf(']') : isIP(entry) === 6 || entry.includes('/');
  if (colon < 0 || portless) {
    return { host: entry, port: undefined, badPort: false };
  }
  const port = portOf(entry.slice(colon + 1));
  return { host: entry.slice(0, colon), port, badPort: port === undefined };
}

function addEntry(entry: string, names: NameEntry[], addresses: AddressEntry[]): void {
  const { host, port, badPort } = splitPort(entry);
  if (badPort || host === '') return;
  if (host.startsWith('[') || host.includes('/') || isIP(host) !== 0) {
    const range = rangeOf(unbracketed(host));
    if (range) addresses.push({ range, port });
    return;
  }
  const name = canonicalName(host.replace(/^\*?\./, ''));
  // Left out, matching nothing as in curl: a name the URL parser reads as an address (`127.1`: curl compares it
  // as a name, with hosts it has normalised to 127.0.0.1), and a wildcard inside a name or `*` among entries.
  if (name !== '' && isIP(name) === 0 && !name.includes('*')) names.push({ name, port });
}

/** Parses one NO_PROXY value; never throws (a malformed entry is left out). */
export function parseNoProxy(value: string): NoProxyList {
  const names: NameEntry[] = [];
  const addresses: AddressEntry[] = [];
  if (value.trim() === '*') return { all: true, names, addresses };
  for (const entry of value.split(/[\s,]+/)) if (entry !== '') addEntry(entry, names, addresses);
  return { all: false, names, addresses };
}

/**
 * Whether a connection to `hostname` (as URL.hostname gives it: IPv6 in brackets or not, accept both) on
 * `port` goes without the proxy.
 */
export function bypassesProxy(list: NoProxyList, hostname: string, port: number): boolean {
  if (list.all) return true;
  const portMatches = (entry: { port: Port }) => entry.port === undefined || entry.port === port;
  const address = unbracketed(hostname);
  const family = familyOf(address);
  if (family !== undefined) {
    return list.addresses.some((entry) => portMatches(entry) && entry.range.check(address, family));
  }
  const host = canonicalName(hostname);
  return list.names.some((entry) => portMatches(entry) && (host === entry.name || host.endsWith(`.${entry.name}`)));
}
