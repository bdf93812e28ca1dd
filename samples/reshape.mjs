// A transform for the sample tables (samples/products.parquet, samples/products.csv; docs/transform.md): each row
// comes as a put typed by the product schema. Discontinued products are left out, and the price band, which the
// schema has and the tables do not, is derived from the price.
export default function reshape(op) {
  const fields = op.fields;
  if (fields === undefined) return op;
  if (fields.status === 'discontinued') return null;
  if (typeof fields.price === 'number') fields.price_band = fields.price < 25 ? 'budget' : fields.price < 100 ? 'standard' : 'premium';
  return op;
}
