import { documentTypesOf, type DocumentModel } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';

/** A package whose one schema has a field of every kind the document parser knows, for the schema tests. */
export const kindsSchema = `schema kinds {
  document kinds {
    struct inner { field sub type int {} }
    field year type int { indexing: summary | attribute }
    field big type long { indexing: summary | attribute }
    field score type float { indexing: summary | attribute }
    field flag type bool { indexing: summary | attribute }
    field title type string { indexing: summary | index }
    field tags type array<string> { indexing: summary | attribute }
    field weights type weightedset<string> { indexing: summary | attribute }
    field ratings type map<string, int> { indexing: summary }
    field nested type inner { indexing: summary }
    field where type position { indexing: summary | attribute }
    field emb type tensor<float>(x[3]) { indexing: summary | attribute }
    field sparse type tensor(key{}) { indexing: summary | attribute }
  }
}
`;

export function servicesXml(documentApi = '<document-api/>'): string {
  return `<?xml version="1.0" encoding="utf-8" ?>
<services version="1.0">
  <container id="default" version="1.0">
    ${documentApi}
    <nodes><node hostalias="node1"/></nodes>
  </container>
  <content id="content" version="1.0">
    <min-redundancy>1</min-redundancy>
    <documents><document type="kinds" mode="index"/></documents>
    <nodes><node hostalias="node1" distribution-key="0"/></nodes>
  </content>
</services>
`;
}

export function kindsPackage(documentApi?: string): Record<string, string> {
  return { 'services.xml': servicesXml(documentApi), 'schemas/kinds.sd': kindsSchema };
}

/**
 * Document types for the judge and quick-reader tests: `all`, with a field of every kind (and collections,
 * structs and tensors of several shapes), and `music`, which `all`'s reference field points at.
 */
export const everyKindTypes: DocumentModel['types'] = documentTypesOf([
  parseSchema(
    `
schema all {
  document all {
    struct inner { field sub type int {} }
    struct outer { field name type string {} field deep type inner {} }
    field i type int { indexing: attribute }
    field l type long { indexing: attribute }
    field b type byte { indexing: attribute }
    field f type float { indexing: attribute }
    field d type double { indexing: attribute }
    field h type float16 { indexing: attribute }
    field flag type bool { indexing: attribute }
    field s type string { indexing: summary }
    field r type raw { indexing: summary }
    field u type uri { indexing: summary }
    field p type predicate { indexing: attribute }
    field pos type position { indexing: attribute }
    field ref type reference<music> { indexing: attribute }
    field arr type array<int> { indexing: attribute }
    field tags type array<string> { indexing: attribute }
    field ws type weightedset<string> { indexing: attribute }
    field wsi type weightedset<int> { indexing: attribute }
    field m type map<string, int> { indexing: summary }
    field mi type map<int, string> { indexing: summary }
    field st type outer { indexing: summary }
    field sts type array<inner> { indexing: summary }
    field nested type array<array<string>> { indexing: summary }
    field dense type tensor<float>(x[3]) { indexing: attribute }
    field sparse type tensor(key{}) { indexing: attribute }
    field mixed type tensor(key{}, x[2]) { indexing: attribute }
  }
}`,
    'all.sd',
  ),
  parseSchema('schema music { document music { field title type string { indexing: summary } } }', 'music.sd'),
]);
