import type { OperationKind } from './operation.js';

/** How far into an operation the id is looked for: the key comes first in every form we read or write. */
const scanBytes = 4096;

const idKey = /"(put|update|remove|id)"\s*:\s*"((?:[^"\\\n]|\\.){1,2048})"/;

/**
 * The id and kind an operation that could not be read still names, when its bytes show them (`{"put":"id:…",` before
 * the broken part): so a failure record and `onResult` say which document failed, not only where. A best effort on
 * bytes that did not parse: undefined when no id key is found.
 */
export function looseOperationId(bytes: Uint8Array): { id: string; kind: OperationKind } | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, scanBytes)).toString('utf8');
  const found = idKey.exec(head);
  if (found === null) return undefined;
  let id: string;
  try {
    id = JSON.parse(`"${found[2]}"`) as string;
  } catch {
    return undefined;
  }
  const key = found[1];
  return { id, kind: key === 'id' ? 'put' : (key as OperationKind) };
}
