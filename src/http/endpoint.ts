import { VespaBulkError } from '../core/errors.js';

/** Splits an endpoint URL into the origin a transport connects to and a path prefix (no trailing slash). */
export function splitEndpoint(endpoint: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new VespaBulkError('VB_USAGE', `invalid endpoint URL '${endpoint}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new VespaBulkError('VB_USAGE', `endpoint '${endpoint}' must be http:// or https://`);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

export function isLoopback(origin: string): boolean {
  const host = new URL(origin).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
