/**
 * A free-text part (slug, name) inside a `|`-separated stored value (record-state.ts, review-codec.ts) has `%`
 * and `|` escaped, so that the separator never appears in a part.
 */
export function escapePart(value: string): string {
  return value.replace(/%/g, '%25').replace(/\|/g, '%7C');
}

export function unescapePart(value: string): string {
  return value.replace(/%7C/g, '|').replace(/%25/g, '%');
}
