import type { ArithmeticOperator, BoolNode, ComparisonOperator, PathStep, ValueNode } from './ast.js';

/**
 * Turns a parsed selection into closures, so evaluating it over a million documents does no tree walking
 * and no per-document allocation on the common paths (a top-level field compared with a literal).
 *
 * Semantics follow Vespa's content-node evaluator (document/src/vespa/document/select):
 *
 * - Three-valued logic: every condition is true, false or invalid. Invalid comes from comparisons that are
 *   not well defined: ordering or matching against a missing field (`music.year > 2000` when year is unset),
 *   values of different types (`"1" == 1`), a field of a document of another type (`music.year` on a book),
 *   `id.user` on an id without `n=`, arithmetic on non-numbers, division by zero.
 *   `and` is false if any operand is false, else invalid if any is invalid; `or` is true if any operand is
 *   true, else invalid if any is invalid; `not invalid` is invalid. A selection whose result is invalid does
 *   not match. So `not music.year > 2000` does NOT match a music document without `year`, while
 *   `not music.year == 2000` does (== against a missing field is a well-defined false).
 * - `==` and `!=` are defined against null: a missing field equals null, any present value does not.
 * - No type coercion: numbers compare with numbers (int and float mix freely), strings with strings
 *   (ordered by UTF-16 code unit, which is byte order for ASCII as Vespa's byte-wise order).
 * - Glob `=` matches the whole string (`*` any run, `?` one character); with a right side that is not a
 *   string it behaves as `==`. Regex `=~` is a search (anchor with ^ and $); an empty pattern matches.
 * - A collection on the left (array, or the keys of a map / weighted set) matches if any element does:
 *   true if one element gives true, else false if one gives false, else invalid. Empty collections are null.
 * - JSON booleans are the integers 1 and 0, as Vespa stores bool fields; `true`/`false` used as values too.
 */

/** What a condition evaluates to: Vespa's three-valued result, whose third value (invalid) is neither. */
export type Truth = 0 | 1 | 2;
export const FALSE: Truth = 0;
export const TRUE: Truth = 1;
export const INVALID_TRUTH: Truth = 2;

/** `not`: true and false swap; invalid stays invalid. */
function negate(t: Truth): Truth {
  if (t === INVALID_TRUTH) return t;
  return t === TRUE ? FALSE : TRUE;
}

/** The one invalid value (a value expression that cannot be read). An object identity, so no field value can collide with it. */
export const INVALID_VALUE: unique symbol = Symbol('invalid');
/** A normalized value: scalars, null, invalid, or a non-empty collection of raw field values. */
export type Value = number | string | null | typeof INVALID_VALUE | readonly unknown[];

export interface EvalDocument {
  id: string;
  type: string;
  fields: Record<string, unknown>;
}
export interface EvalContext {
  nowSeconds?: number;
}

export type BoolFn = (doc: EvalDocument, ctx: EvalContext | undefined) => Truth;
type ValueFn = (doc: EvalDocument, ctx: EvalContext | undefined) => Value;

/** Field values as the language sees them: JSON null and empty collections are null, objects their keys. */
export function normalize(v: unknown): Value {
  switch (typeof v) {
    case 'number':
    case 'string':
      return v;
    case 'boolean':
      return v ? 1 : 0;
    case 'undefined':
      return null;
    case 'object':
      if (v === null) return null;
      if (Array.isArray(v)) return v.length === 0 ? null : v;
      {
        // Maps and weighted sets (and, without a schema to tell them apart, structs) compare by key.
        const keys = Object.keys(v);
        return keys.length === 0 ? null : keys;
      }
    default:
      return INVALID_VALUE;
  }
}

// ---- comparison -------------------------------------------------------------------------------------------

function equals(l: Value, r: Value): Truth {
  if (l === null || r === null) return l === r ? TRUE : FALSE;
  const lt = typeof l;
  if (lt !== typeof r || lt === 'object') return INVALID_TRUTH; // mixed types, or collection vs scalar
  return l === r ? TRUE : FALSE;
}

function order(op: '<' | '<=' | '>' | '>=', l: Value, r: Value): Truth {
  const lt = typeof l;
  if ((lt !== 'number' && lt !== 'string') || lt !== typeof r) return INVALID_TRUTH;
  const a = l as number | string;
  const b = r as number | string;
  switch (op) {
    case '<':
      return a < b ? TRUE : FALSE;
    case '<=':
      return a <= b ? TRUE : FALSE;
    case '>':
      return a > b ? TRUE : FALSE;
    case '>=':
      return a >= b ? TRUE : FALSE;
  }
}

/** Matches a string against a pattern given at run time (a literal pattern is compiled once, see below). */
type Matcher = (s: string) => boolean;

const dynamicMatchers = new Map<string, Matcher>();
const maxDynamicMatchers = 256;

function cachedMatcher(op: '=' | '=~', pattern: string): Matcher {
  const key = (op === '=' ? 'g' : 'r') + pattern;
  let m = dynamicMatchers.get(key);
  if (m === undefined) {
    m = op === '=' ? globMatcher(pattern) : regexMatcher(pattern);
    if (dynamicMatchers.size >= maxDynamicMatchers) dynamicMatchers.clear();
    dynamicMatchers.set(key, m);
  }
  return m;
}

/** Scalar (or collection-vs-scalar) comparison; `match` is the precompiled matcher for a literal pattern. */
function compareScalar(op: ComparisonOperator, l: Value, r: Value, match: Matcher | undefined): Truth {
  switch (op) {
    case '==':
      return equals(l, r);
    case '!=':
      return negate(equals(l, r));
    case '<':
    case '<=':
    case '>':
    case '>=':
      return order(op, l, r);
    case '=~':
      if (typeof l !== 'string' || typeof r !== 'string') return INVALID_TRUTH;
      return (match ?? cachedMatcher('=~', r))(l) ? TRUE : FALSE;
    case '=':
      if (typeof r !== 'string') return equals(l, r);
      if (typeof l !== 'string') return INVALID_TRUTH;
      return (match ?? cachedMatcher('=', r))(l) ? TRUE : FALSE;
  }
}

const sizeOps: Record<ComparisonOperator, (a: number, b: number) => boolean> = {
  '==': (a, b) => a === b,
  '=': (a, b) => a === b,
  '=~': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

export function compareValues(op: ComparisonOperator, l: Value, r: Value, match?: Matcher): Truth {
  if (l === INVALID_VALUE || r === INVALID_VALUE) return INVALID_TRUTH;
  if (typeof l === 'object' && l !== null) {
    if (typeof r === 'object' && r !== null) {
      // Collection against collection: element by element, as Vespa does.
      if (l.length !== r.length) return sizeOps[op](l.length, r.length) ? TRUE : FALSE;
      for (let i = 0; i < l.length; i++) {
        const res = compareValues(op, normalize(l[i]), normalize(r[i]), match);
        if (res !== TRUE) return res;
      }
      return TRUE;
    }
    let sawFalse = false;
    for (let i = 0; i < l.length; i++) {
      const res = compareValues(op, normalize(l[i]), r, match);
      if (res === TRUE) return TRUE;
      if (res === FALSE) sawFalse = true;
    }
    return sawFalse ? FALSE : INVALID_TRUTH;
  }
  return compareScalar(op, l, r, match);
}

// ---- glob and regex ---------------------------------------------------------------------------------------

// Characters that are syntax in a (unicode-mode) regex; only these may be escaped.
const regexSpecial = /[.*+?^${}()|[\]\\/]/g;

export function globMatcher(glob: string): Matcher {
  const star = glob.indexOf('*');
  const hasQuestion = glob.includes('?');
  if (!hasQuestion) {
    // The common shapes, without a regex: "abc", "abc*", "*abc", "*abc*".
    if (star < 0) return (s) => s === glob;
    const inner = glob.slice(1, -1);
    if (star === glob.length - 1) {
      const prefix = glob.slice(0, -1);
      return (s) => s.startsWith(prefix);
    }
    if (star === 0 && glob.lastIndexOf('*') === 0) {
      const suffix = glob.slice(1);
      return (s) => s.endsWith(suffix);
    }
    if (glob.length >= 2 && star === 0 && glob.endsWith('*') && !inner.includes('*')) return (s) => s.includes(inner);
  }
  let source = '^';
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(regexSpecial, '\\$&');
  }
  // dotAll: a glob's '*' and '?' stand for any character, newlines included.
  const re = new RegExp(source + '$', 'su');
  return (s) => re.test(s);
}

export function regexMatcher(pattern: string): Matcher {
  if (pattern === '') return () => true;
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    // Vespa's regex engine treats a pattern it cannot compile as one that matches nothing.
    return () => false;
  }
  return (s) => re.test(s);
}

// ---- document ids -----------------------------------------------------------------------------------------

interface IdParts {
  namespace: string;
  type: string;
  kv: string;
  specific: string;
}

// Selections like `id.user > 10 and id.user < 20` read the same id several times in a row.
let lastId: string | undefined;
let lastParts: IdParts | undefined;

/** Splits `id:<ns>:<type>:<kv>:<specific>` without validation (documents in the store are already valid). */
function splitId(id: string): IdParts | undefined {
  if (id === lastId) return lastParts;
  lastId = id;
  lastParts = splitIdUncached(id);
  return lastParts;
}

function splitIdUncached(id: string): IdParts | undefined {
  if (!id.startsWith('id:')) return undefined;
  const c1 = id.indexOf(':', 3);
  const c2 = c1 < 0 ? -1 : id.indexOf(':', c1 + 1);
  const c3 = c2 < 0 ? -1 : id.indexOf(':', c2 + 1);
  if (c3 < 0) return undefined;
  return {
    namespace: id.slice(3, c1),
    type: id.slice(c1 + 1, c2),
    kv: id.slice(c2 + 1, c3),
    specific: id.slice(c3 + 1),
  };
}

function compileId(part: Extract<ValueNode, { kind: 'id' }>['part']): ValueFn {
  switch (part) {
    case undefined:
      return (doc) => doc.id;
    case 'scheme':
      return () => 'id';
    case 'namespace':
      return (doc) => splitId(doc.id)?.namespace ?? INVALID_VALUE;
    case 'type':
      return (doc) => splitId(doc.id)?.type ?? INVALID_VALUE;
    case 'specific':
      return (doc) => splitId(doc.id)?.specific ?? INVALID_VALUE;
    case 'user':
      return (doc) => {
        const kv = splitId(doc.id)?.kv;
        // Precision: numbers beyond 2^53 are rounded (JavaScript numbers), as are JSON field values.
        return kv !== undefined && kv.startsWith('n=') ? Number(kv.slice(2)) : INVALID_VALUE;
      };
    case 'group':
      return (doc) => {
        const kv = splitId(doc.id)?.kv;
        return kv !== undefined && kv.startsWith('g=') ? kv.slice(2) : INVALID_VALUE;
      };
  }
}

// ---- fields -----------------------------------------------------------------------------------------------

function ownProperty(obj: unknown, name: string): unknown {
  return typeof obj === 'object' && obj !== null && !Array.isArray(obj) && Object.hasOwn(obj, name)
    ? (obj as Record<string, unknown>)[name]
    : undefined;
}

/** One path step applied to every value in `values`; arrays met by a struct step are looked into (Vespa's fieldpath iteration). */
function applyStep(values: unknown[], step: PathStep): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (v === undefined || v === null) continue;
    switch (step.kind) {
      case 'field':
        if (Array.isArray(v)) {
          for (const e of v) {
            const x = ownProperty(e, step.name);
            if (x !== undefined) out.push(x);
          }
        } else {
          const x = ownProperty(v, step.name);
          if (x !== undefined) out.push(x);
        }
        break;
      case 'key': {
        const x = ownProperty(v, step.key);
        if (x !== undefined) out.push(x);
        break;
      }
      case 'index':
        if (Array.isArray(v) && step.index < v.length) out.push(v[step.index]);
        break;
    }
  }
  return out;
}

function compileField(node: Extract<ValueNode, { kind: 'field' }>): ValueFn {
  const { type, field, path } = node;
  // `fields.constructor` would find Object.prototype's; such names take the checked path.
  const safeDirect = !(field in Object.prototype);
  const read = safeDirect
    ? (doc: EvalDocument): unknown => doc.fields[field]
    : (doc: EvalDocument): unknown => ownProperty(doc.fields, field);
  if (path.length === 0) {
    return (doc) => (doc.type !== type ? INVALID_VALUE : normalize(read(doc)));
  }
  return (doc) => {
    if (doc.type !== type) return INVALID_VALUE;
    let values: unknown[] = [read(doc)];
    let fannedOut = false;
    for (const step of path) {
      if (step.kind === 'field' && values.some(Array.isArray)) fannedOut = true;
      values = applyStep(values, step);
      if (values.length === 0) return null;
    }
    if (!fannedOut) return normalize(values[0]);
    return values.length === 0 ? null : values;
  };
}

// ---- arithmetic and functions -----------------------------------------------------------------------------

/** Whether the node is a float by its syntax (e.g. `2.0`), which makes `/` a float division. */
function isStaticFloat(node: ValueNode): boolean {
  switch (node.kind) {
    case 'number':
      return node.float;
    case 'arith':
      return isStaticFloat(node.left) || isStaticFloat(node.right);
    case 'negate':
      return isStaticFloat(node.operand);
    case 'call':
      return isStaticFloat(node.operand);
    default:
      return false;
  }
}

function arithmetic(op: ArithmeticOperator, l: Value, r: Value, floatDivision: boolean): Value {
  if (typeof l === 'string' && typeof r === 'string') return op === '+' ? l + r : INVALID_VALUE;
  if (typeof l !== 'number' || typeof r !== 'number') return INVALID_VALUE;
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    case '/':
      // Vespa fails the whole evaluation on division by zero; invalid (no match) is the safe equivalent.
      if (r === 0) return INVALID_VALUE;
      // JSON does not say whether 4 is an int or a float: integral values divide as integers, as Vespa's ints do.
      return !floatDivision && Number.isInteger(l) && Number.isInteger(r) ? Math.trunc(l / r) : l / r;
    case '%':
      // Modulo is defined on integers only.
      return Number.isInteger(l) && Number.isInteger(r) && r !== 0 ? l % r : INVALID_VALUE;
  }
}

function asciiLowercase(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

// ---- compilation ------------------------------------------------------------------------------------------

function compileValue(node: ValueNode): ValueFn {
  switch (node.kind) {
    case 'null':
      return () => null;
    case 'number': {
      const v = node.value;
      return () => v;
    }
    case 'string': {
      const v = node.value;
      return () => v;
    }
    case 'now':
      return (_doc, ctx) => ctx?.nowSeconds ?? Math.floor(Date.now() / 1000);
    case 'id':
      return compileId(node.part);
    case 'field':
      return compileField(node);
    case 'arith': {
      const left = compileValue(node.left);
      const right = compileValue(node.right);
      const op = node.op;
      const floatDivision = isStaticFloat(node);
      return (doc, ctx) => arithmetic(op, left(doc, ctx), right(doc, ctx), floatDivision);
    }
    case 'negate': {
      const operand = compileValue(node.operand);
      return (doc, ctx) => {
        const v = operand(doc, ctx);
        return typeof v === 'number' ? -v : INVALID_VALUE;
      };
    }
    case 'call': {
      const operand = compileValue(node.operand);
      if (node.name === 'lowercase') {
        return (doc, ctx) => {
          const v = operand(doc, ctx);
          return typeof v === 'string' ? asciiLowercase(v) : INVALID_VALUE;
        };
      }
      return (doc, ctx) => {
        const v = operand(doc, ctx);
        return typeof v === 'number' ? Math.abs(v) : INVALID_VALUE;
      };
    }
  }
}

function constantOf(node: ValueNode): { value: Value } | undefined {
  switch (node.kind) {
    case 'null':
      return { value: null };
    case 'number':
    case 'string':
      return { value: node.value };
    default:
      return undefined;
  }
}

function compileCompare(node: Extract<BoolNode, { kind: 'compare' }>): BoolFn {
  const { op } = node;
  const left = compileValue(node.left);
  const constant = constantOf(node.right);
  if (constant === undefined) {
    const right = compileValue(node.right);
    return (doc, ctx) => compareValues(op, left(doc, ctx), right(doc, ctx));
  }
  const c = constant.value;
  if (typeof c === 'string' && (op === '=' || op === '=~')) {
    const match = op === '=' ? globMatcher(c) : regexMatcher(c);
    return (doc, ctx) => {
      const v = left(doc, ctx);
      if (typeof v === 'string') return match(v) ? TRUE : FALSE;
      return compareValues(op, v, c, match);
    };
  }
  if (typeof c === 'number') {
    // The hot path for `type.field <op> number`: one typeof check, then a native comparison.
    const fast = numberComparators[op];
    if (fast !== undefined) {
      return (doc, ctx) => {
        const v = left(doc, ctx);
        if (typeof v === 'number') return fast(v, c);
        return compareValues(op, v, c);
      };
    }
  }
  if (typeof c === 'string' && (op === '==' || op === '!=')) {
    const eq = op === '==' ? TRUE : FALSE;
    const ne = op === '==' ? FALSE : TRUE;
    return (doc, ctx) => {
      const v = left(doc, ctx);
      if (typeof v === 'string') return v === c ? eq : ne;
      return compareValues(op, v, c);
    };
  }
  return (doc, ctx) => compareValues(op, left(doc, ctx), c);
}

const numberComparators: Partial<Record<ComparisonOperator, (a: number, b: number) => Truth>> = {
  '==': (a, b) => (a === b ? TRUE : FALSE),
  '=': (a, b) => (a === b ? TRUE : FALSE),
  '!=': (a, b) => (a !== b ? TRUE : FALSE),
  '<': (a, b) => (a < b ? TRUE : FALSE),
  '<=': (a, b) => (a <= b ? TRUE : FALSE),
  '>': (a, b) => (a > b ? TRUE : FALSE),
  '>=': (a, b) => (a >= b ? TRUE : FALSE),
};

export function compileBool(node: BoolNode): BoolFn {
  switch (node.kind) {
    case 'constant': {
      const r: Truth = node.value ? TRUE : FALSE;
      return () => r;
    }
    case 'doctype': {
      const type = node.type;
      return (doc) => (doc.type === type ? TRUE : FALSE);
    }
    case 'not': {
      const operand = compileBool(node.operand);
      return (doc, ctx) => negate(operand(doc, ctx));
    }
    case 'and': {
      const left = compileBool(node.left);
      const right = compileBool(node.right);
      return (doc, ctx) => {
        const l = left(doc, ctx);
        if (l === FALSE) return FALSE;
        const r = right(doc, ctx);
        if (r === FALSE) return FALSE;
        return l === INVALID_TRUTH || r === INVALID_TRUTH ? INVALID_TRUTH : TRUE;
      };
    }
    case 'or': {
      const left = compileBool(node.left);
      const right = compileBool(node.right);
      return (doc, ctx) => {
        const l = left(doc, ctx);
        if (l === TRUE) return TRUE;
        const r = right(doc, ctx);
        if (r === TRUE) return TRUE;
        return l === INVALID_TRUTH || r === INVALID_TRUTH ? INVALID_TRUTH : FALSE;
      };
    }
    case 'compare':
      return compileCompare(node);
  }
}
