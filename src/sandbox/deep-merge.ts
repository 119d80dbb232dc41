export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The control route's patch rule: objects merge key by key, anything else (arrays, numbers, null) replaces
 * what was there. Neither input is modified.
 */
export function deepMerge(target: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] =
      isPlainObject(value) && isPlainObject(current) ? deepMerge(current, value) : structuredClone(value);
  }
  return out;
}
