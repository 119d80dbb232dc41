/**
 * A tagged template for server-rendered HTML that escapes every interpolated value unless it is already
 * `SafeHtml` (the result of another `html` call). Markup can therefore only come from template literals in
 * this code base, never from data: names from the CRM, report fields and error messages are all text.
 */

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Joins fragments with a separator; the separator is markup written in this code base. */
export function joinHtml(parts: readonly HtmlValue[], separator: SafeHtml = new SafeHtml('')): SafeHtml {
  return new SafeHtml(parts.map(render).join(separator.value));
}
