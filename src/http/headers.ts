const secretHeaders = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'data-plane-token']);

/** Headers as they may appear in logs and traces: secrets masked. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    out[k] = secretHeaders.has(k.toLowerCase()) || /token|secret|key/i.test(k) ? '***' : v;
  return out;
}
