import { VespaBulkError } from '../core/errors.js';
import { parseDocumentId } from '../document/id.js';
import type { DocumentModel, DocumentType } from '../schema/document-model.js';
import type { Random } from './random.js';
import { canGenerate, valueOf } from './schema-values.js';
import { vary } from './template-values.js';

/** Shares of puts, updates and removes in generated load; they need not add up to 100 (they are weights). */
export interface Mix {
  put: number;
  update: number;
  remove: number;
}

/** `put=80,update=15,remove=5` → the weights; kinds not named are 0, and some weight must be on put. */
export function parseMix(text: string): Mix {
  const mix: Mix = { put: 0, update: 0, remove: 0 };
  for (const part of text.split(',')) {
    const m = /^\s*(put|update|remove)\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) throw new VespaBulkError('VB_USAGE', `--mix: expected put=N,update=N,remove=N, not '${part}' in '${text}'`);
    mix[m[1] as keyof Mix] = Number(m[2]);
  }
  // Updates and removes go to documents put before: without puts there are none.
  if (mix.put <= 0)
    throw new VespaBulkError(
      'VB_USAGE',
      `--mix: puts must have a share > 0 (updates and removes go to documents put before), not '${text}'`,
    );
  return mix;
}

/** What makes the documents: their ids and fields, and an update of one field. */
export interface DocumentMaker {
  /** The next document to put: its id and its `fields`. */
  put(n: number): { id: string; fields: Record<string, unknown> };
  /** An update of a document of this maker: `fields` with one field operation. */
  update(id: string): Record<string, unknown>;
  /** Where its documents go: each namespace and document type an id of it names. */
  readonly places: ReadonlyArray<{ namespace: string; documentType: string }>;
}

/**
 * Documents of a package's schemas: each document type in turn (or those named), every field it can
 * generate a value for (see schema-values.ts), ids `id:<namespace>:<type>::<run>-<n>`.
 */
export function schemaDocuments(
  model: DocumentModel,
  random: Random,
  options: { namespace: string; documentTypes?: string[]; runTag: string },
): DocumentMaker {
  const types: DocumentType[] = [];
  for (const name of options.documentTypes ?? [...model.types.keys()]) {
    const type = model.types.get(name);
    if (type === undefined)
      throw new VespaBulkError(
        'VB_USAGE',
        `document type '${name}' is not in the package (it has ${[...model.types.keys()].join(', ') || 'none'})`,
      );
    types.push(type);
  }
  if (types.length === 0)
    throw new VespaBulkError('VB_USAGE', 'the package has no document types to generate documents of');
  const fieldsOf = new Map(types.map((t) => [t.name, [...t.fields].filter(([, type]) => canGenerate(type))]));
  const typeOfId = (id: string) => id.slice(id.indexOf(':', 3) + 1, id.indexOf(':', id.indexOf(':', 3) + 1));
  return {
    places: types.map((t) => ({ namespace: options.namespace, documentType: t.name })),
    put(n) {
      const type = types[n % types.length];
      const fields: Record<string, unknown> = {};
      for (const [name, dataType] of fieldsOf.get(type.name)!)
        fields[name] = valueOf(dataType, name, random, options.namespace);
      return { id: `id:${options.namespace}:${type.name}::${options.runTag}-${n}`, fields };
    },
    update(id) {
      const fields = fieldsOf.get(typeOfId(id)) ?? [];
      if (fields.length === 0) return {};
      const [name, dataType] = random.pick(fields);
      return { [name]: { assign: valueOf(dataType, name, random, options.namespace) } };
    },
  };
}

/**
 * Documents like a template (`{"put": id, "fields": {...}}`): the template's namespace and type, its fields
 * varied per document (see template-values.ts), ids `id:<namespace>:<type>::<run>-<n>`.
 */
export function templateDocuments(template: unknown, random: Random, runTag: string): DocumentMaker {
  const t = template as { put?: unknown; id?: unknown; fields?: unknown };
  const id = t?.put ?? t?.id;
  if (
    t === null ||
    typeof t !== 'object' ||
    typeof id !== 'string' ||
    t.fields === null ||
    typeof t.fields !== 'object' ||
    Array.isArray(t.fields)
  ) {
    throw new VespaBulkError(
      'VB_USAGE',
      'the template must be a put operation: {"put": "id:<namespace>:<type>::<local>", "fields": {...}}',
    );
  }
  const parsed = parseDocumentId(id);
  const fields = t.fields as Record<string, unknown>;
  const names = Object.keys(fields);
  return {
    places: [{ namespace: parsed.namespace, documentType: parsed.type }],
    put(n) {
      return {
        id: `id:${parsed.namespace}:${parsed.type}::${runTag}-${n}`,
        fields: vary(fields, random) as Record<string, unknown>,
      };
    },
    update() {
      if (names.length === 0) return {};
      const name = random.pick(names);
      return { [name]: { assign: vary(fields[name], random) } };
    },
  };
}

/** Most ids kept for updates and removes: beyond it, a new put replaces a random one. */
const maxLiveIds = 1_000_000;

/**
 * The operation lines of a load: puts of new documents, and by the mix updates and removes of documents put
 * before (a removed one is forgotten, so nothing later targets it). The state (ids put) outlives one call of
 * `lines()`, so the steps of a bench go on where the one before stopped.
 */
export class OperationGenerator {
  private n = 0;
  private readonly live: string[] = [];
  private readonly total: number;

  constructor(
    private readonly maker: DocumentMaker,
    private readonly random: Random,
    private readonly mix: Mix = { put: 1, update: 0, remove: 0 },
  ) {
    this.total = mix.put + mix.update + mix.remove;
  }

  /** The next operation, as one JSON line (no newline). */
  next(): string {
    const r = this.random.next() * this.total;
    if (this.live.length > 0 && r >= this.mix.put) {
      const at = Math.floor(this.random.next() * this.live.length);
      const id = this.live[at];
      if (r < this.mix.put + this.mix.update) return JSON.stringify({ update: id, fields: this.maker.update(id) });
      // Removed: out of the pool, so no later update or remove targets it.
      this.live[at] = this.live[this.live.length - 1]!;
      this.live.pop();
      return JSON.stringify({ remove: id });
    }
    const doc = this.maker.put(this.n++);
    if (this.live.length < maxLiveIds) this.live.push(doc.id);
    else this.live[Math.floor(this.random.next() * maxLiveIds)] = doc.id;
    return JSON.stringify({ put: doc.id, fields: doc.fields });
  }
}
