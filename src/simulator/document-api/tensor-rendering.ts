import type { DocumentModel } from '../../schema/document-model.js';
import { tensorFormatParameter } from '../../document/tensor-format.js';
import { encodeTensor, tensorEncodingOf, type TensorEncoding } from '../../schema/tensor-json.js';
import { decodeTensor } from '../../schema/tensor-value.js';
import type { TensorType } from '../../schema/data-type.js';
import { parseExact, stringifyExact } from './exact-json.js';
import { decodeComponent } from './query-parameters.js';

/**
 * Tensor fields of documents that a get or visit returns, written per `format.tensors`. The content node keeps a
 * tensor in binary form, so the service writes it back in the requested form whatever form it was fed in. The
 * simulator knows which fields are tensors only from a deployed schema; without one, fields go out as stored.
 */

/** Rewrites a document's fields JSON (already projected to the field set) for its document type. */
export type FieldsRenderer = (docType: string, fieldsJson: string) => string;

/**
 * The encoding a request asks for. The service reads the parameter's raw values: exactly one value picks the
 * form, and an unknown value, an empty one or a repeated parameter all give `short` (never a 400).
 */
export function requestedTensorEncoding(queryString: string): TensorEncoding {
  const values: string[] = [];
  for (const pair of queryString.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (name !== '' && decodeComponent(name) === tensorFormatParameter)
      values.push(eq < 0 ? '' : decodeComponent(pair.slice(eq + 1)));
  }
  return tensorEncodingOf(values.length === 1 ? values[0] : undefined);
}

/** The renderer for a deployed model, or undefined when there is nothing to rewrite (no model). */
export function fieldsRenderer(model: DocumentModel | null, encoding: TensorEncoding): FieldsRenderer | undefined {
  if (model === null) return undefined;
  const tensorFields = new Map<string, Map<string, TensorType>>();
  for (const [name, type] of model.types) {
    const fields = new Map<string, TensorType>();
    for (const [field, t] of type.fields) if (t.kind === 'tensor') fields.set(field, t.tensor);
    if (fields.size > 0) tensorFields.set(name, fields);
  }
  if (tensorFields.size === 0) return undefined;
  return (docType, fieldsJson) => {
    const fields = tensorFields.get(docType);
    if (fields === undefined) return fieldsJson;
    return renderFields(fieldsJson, fields, encoding);
  };
}

function renderFields(fieldsJson: string, tensors: Map<string, TensorType>, encoding: TensorEncoding): string {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseExact(fieldsJson) as Record<string, unknown>;
  } catch {
    return fieldsJson;
  }
  if (!Object.keys(parsed).some((name) => tensors.has(name))) return fieldsJson;
  const parts: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    const type = tensors.get(name);
    parts.push(
      `${JSON.stringify(name)}:${type === undefined ? stringifyExact(value) : renderTensor(value, type, encoding)}`,
    );
  }
  return `{${parts.join(',')}}`;
}

function renderTensor(value: unknown, type: TensorType, encoding: TensorEncoding): string {
  try {
    return encodeTensor(decodeTensor(value, type), encoding);
  } catch {
    // Stored before the schema said it is a tensor, or in a form this reader does not know: left as it was.
    return stringifyExact(value);
  }
}
