/**
 * The soak's operations and what they should leave: puts, with assign-only updates of some earlier documents
 * and removes of others interleaved, all safe to repeat. No update touches a removed document.
 */
export type Op =
  | { put: string; fields: Record<string, unknown> }
  | { update: string; fields: Record<string, { assign: unknown }> }
  | { remove: string };

export function roundOperations(puts: number, prefix: string): Op[] {
  const id = (k: number): string => `id:soak:music::${prefix}-${k}`;
  const ops: Op[] = [];
  for (let i = 0; i < puts; i++) {
    ops.push({ put: id(i), fields: { title: `title ${i}`, n: i, body: 'lorem ipsum '.repeat(1 + (i % 20)) } });
    const updated = i - 3;
    if (updated >= 0 && updated % 4 === 0 && updated % 9 !== 1)
      ops.push({
        update: id(updated),
        fields: { title: { assign: `updated ${updated}` }, n: { assign: -1 - updated } },
      });
    const removed = i - 5;
    if (removed >= 0 && removed % 9 === 1) ops.push({ remove: id(removed) });
  }
  return ops;
}

/** The documents `ops` leave, applied in order. */
export function expectedDocuments(ops: readonly Op[]): Map<string, Record<string, unknown>> {
  const docs = new Map<string, Record<string, unknown>>();
  for (const op of ops) {
    if ('put' in op) docs.set(op.put, { ...op.fields });
    else if ('update' in op) {
      const doc = docs.get(op.update);
      if (doc === undefined) continue;
      for (const [k, v] of Object.entries(op.fields)) doc[k] = v.assign;
    } else docs.delete(op.remove);
  }
  return docs;
}

/** Same keys and JSON-equal values (fields here are plain JSON). */
export function sameDocuments(
  a: Map<string, Record<string, unknown>>,
  b: Map<string, Record<string, unknown>>,
): { missing: number; extra: number; different: number } {
  let missing = 0;
  let different = 0;
  for (const [id, fields] of a) {
    const other = b.get(id);
    if (other === undefined) missing++;
    else if (JSON.stringify(sortKeys(fields)) !== JSON.stringify(sortKeys(other))) different++;
  }
  let extra = 0;
  for (const id of b.keys()) if (!a.has(id)) extra++;
  return { missing, extra, different };
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([x], [y]) => x.localeCompare(y)));
}
