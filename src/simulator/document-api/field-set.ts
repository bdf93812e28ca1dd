import { badRequest } from './responses.js';

/**
 * Which fields a get or visit returns. `[all]`/`[document]`/`<type>:[document]` mean every field, `[id]`/`[none]`
 * none, `<type>:f1,f2` (or `f1,f2`) a list.
 */
export type FieldSet = { kind: 'all' } | { kind: 'none' } | { kind: 'some'; fields: string[] };

export const allFields: FieldSet = { kind: 'all' };

export function parseFieldSet(text: string | undefined): FieldSet {
  if (text === undefined) return allFields;
  if (text === '[all]' || text === '[document]') return allFields;
  if (text === '[id]' || text === '[none]') return { kind: 'none' };
  const colon = text.indexOf(':');
  const list = colon < 0 ? text : text.slice(colon + 1);
  if (colon === 0) throw badRequest(`Unknown field set '${text}'`);
  if (list === '[document]' || list === '[all]') return allFields;
  if (list === '[id]' || list === '[none]') return { kind: 'none' };
  const fields = list.split(',').map((f) => f.trim());
  if (fields.some((f) => f === '' || f.includes('[') || f.includes(']')))
    throw badRequest(`Unknown field set '${text}'`);
  return { kind: 'some', fields };
}

/** The fields object restricted to the set; for `all` the object itself. */
export function projectFields(fields: Record<string, unknown>, set: FieldSet): Record<string, unknown> {
  if (set.kind === 'all') return fields;
  if (set.kind === 'none') return {};
  const out: Record<string, unknown> = {};
  for (const name of set.fields) if (Object.prototype.hasOwnProperty.call(fields, name)) out[name] = fields[name];
  return out;
}
