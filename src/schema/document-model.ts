import type { ApplicationPackage } from './app-package.js';
import { parseDataType, type DataType } from './data-type.js';
import type { Schema } from './sd-schema.js';

/**
 * What the document parser of a deployed container knows: the document types of the package with their
 * fields' types, and the container's document-api settings. Built once per deployment; judging an
 * operation (judge.ts) only reads it. Pure: no I/O.
 */
export interface DocumentModel {
  /** Document types by name. */
  types: Map<string, DocumentType>;
  /** `<ignore-undefined-fields>true</ignore-undefined-fields>` in the container's `<document-api>`. */
  ignoreUndefinedFields: boolean;
  /** false when the package has containers and none declares `<document-api>`: /document/v1 answers 404. */
  documentApi: boolean;
}

/** One document type: its fields (those of the types it inherits included) by name. */
export interface DocumentType {
  name: string;
  fields: Map<string, DataType>;
}

/** The model of an application package: every schema's document, and the first document-api container's settings. */
export function documentModelOf(pkg: ApplicationPackage): DocumentModel {
  const withApi = pkg.containers.filter((c) => c.documentApi);
  return {
    types: documentTypesOf([...pkg.schemas.values()]),
    ignoreUndefinedFields: withApi.some((c) => c.ignoreUndefinedFields),
    documentApi: pkg.containers.length === 0 || withApi.length > 0,
  };
}

/** Document types from schemas, with inherited fields and structs resolved (a struct may use an earlier one). */
export function documentTypesOf(schemas: Schema[]): Map<string, DocumentType> {
  const byDocument = new Map(schemas.map((s) => [s.documentName, s]));
  const types = new Map<string, DocumentType>();
  const building = new Set<string>();
  const build = (name: string): DocumentType | undefined => {
    const done = types.get(name);
    if (done !== undefined) return done;
    const schema = byDocument.get(name);
    if (schema === undefined || building.has(name)) return undefined;
    building.add(name);
    const parents = schema.inherits.map(build).filter((t): t is DocumentType => t !== undefined);
    const structTexts = new Map<string, Map<string, string>>();
    for (const parentName of schema.inherits)
      for (const [n, s] of byDocument.get(parentName)?.structs ?? []) structTexts.set(n, s);
    for (const [n, s] of schema.structs) structTexts.set(n, s);
    const structs = new Map<string, DataType>();
    const lookup = (structName: string): DataType | undefined => {
      const known = structs.get(structName);
      if (known !== undefined) return known;
      const members = structTexts.get(structName);
      if (members === undefined) return undefined;
      // Registered before its members are read, so a struct that refers to itself ends rather than loops.
      const struct: DataType = { kind: 'struct', name: structName, fields: new Map() };
      structs.set(structName, struct);
      for (const [member, text] of members) struct.fields.set(member, parseDataType(text, lookup));
      return struct;
    };
    const fields = new Map<string, DataType>();
    for (const parent of parents) for (const [n, t] of parent.fields) fields.set(n, t);
    for (const field of schema.fields.values())
      if (field.inDocument) fields.set(field.name, parseDataType(field.type, lookup));
    const type: DocumentType = { name, fields };
    types.set(name, type);
    building.delete(name);
    return type;
  };
  for (const name of byDocument.keys()) build(name);
  return types;
}
