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
