/**
 * Whether the first 512 bytes are a tar header: its checksum field matches the sum of its bytes (the field
 * itself counted as spaces). Both the deploy client (to refuse a bad package before uploading) and the
 * config-server simulator (to answer 400 as the real one does) tell a tar from other gzipped bytes by this.
 */
export function isTarHeader(tar: Uint8Array): boolean {
  if (tar.length < 512) return false;
  const stored = parseInt(new TextDecoder().decode(tar.subarray(148, 156)).replace(/\0.*$/, '').trim(), 8);
  if (!Number.isFinite(stored)) return false;
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : tar[i];
  return sum === stored;
}
