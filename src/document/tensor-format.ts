/**
 * How the document interface writes tensor fields on get and visit, sent as `format.tensors`. The service's
 * default is `short`; the `-value` forms leave out the `{"type":...}` wrapper; the `hex` forms write the cells of
 * a dense tensor (and the dense blocks of a mixed one) as one hex string in the cell type's bytes, which is far
 * less JSON to write and to parse for embeddings, and which a feed reads back unchanged.
 * @example
 * ```ts
 * import { tensorFormats, visit, type TensorFormat } from 'vespa-bulk';
 *
 * const asked = process.env.TENSOR_FORMAT ?? 'short-value';
 * if (!(tensorFormats as readonly string[]).includes(asked)) throw new Error(`no tensor format ${asked}`);
 * const tensorFormat = asked as TensorFormat;
 * for await (const doc of visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', tensorFormat })) console.log(doc.id, doc.fields?.embedding);
 * ```
 */
export const tensorFormats = ['short', 'long', 'short-value', 'long-value', 'hex', 'hex-value'] as const;

/** One of {@link tensorFormats}. */
export type TensorFormat = (typeof tensorFormats)[number];

/** The query parameter that carries it. */
export const tensorFormatParameter = 'format.tensors';
