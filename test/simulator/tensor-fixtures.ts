import { documentTypesOf, type DocumentModel } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';

/** A document type with a tensor field of each cell type and kind, for the `format.tensors` tests. */
export const tensorSchema = `schema vec {
  document vec {
    field title type string { indexing: summary }
    field d type tensor(x[2]) { indexing: attribute }
    field f type tensor<float>(x[2]) { indexing: attribute }
    field b type tensor<bfloat16>(x[2]) { indexing: attribute }
    field i type tensor<int8>(x[3]) { indexing: attribute }
    field s type tensor(key{}) { indexing: attribute }
    field mx type tensor<float>(cat{},x[2]) { indexing: attribute }
    field mm type tensor(a{},b{},x[2]) { indexing: attribute }
  }
}`;

export const tensorModel: DocumentModel = {
  types: documentTypesOf([parseSchema(tensorSchema, 'vec.sd')]),
  ignoreUndefinedFields: false,
  documentApi: true,
};
