/**
 * Metadata API source files as the Salesforce CLI writes them: one element a line, four spaces a level, text
 * escaped. Shared by the SFDX project's generators (manifest.ts, record-component.ts).
 */

export const METADATA_NS = 'http://soap.sforce.com/2006/04/metadata';

export type XmlValue = string | number | boolean | XmlNode | XmlValue[];
export interface XmlNode {
  [element: string]: XmlValue | undefined;
}

export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

function renderChildren(node: XmlNode, depth: number): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(node)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value])
      lines.push(...renderElement(name, item, depth));
  }
  return lines;
}

export function renderElement(name: string, value: XmlValue, depth: number): string[] {
  const pad = '    '.repeat(depth);
  if (Array.isArray(value)) return value.flatMap((v) => renderElement(name, v, depth));
  if (typeof value === 'object') {
    return [`${pad}<${name}>`, ...renderChildren(value, depth + 1), `${pad}</${name}>`];
  }
  return [`${pad}<${name}>${escapeXml(String(value))}</${name}>`];
}

export function metadataDocument(root: string, node: XmlNode): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<${root} xmlns="${METADATA_NS}">`,
    ...renderChildren(node, 1),
    `</${root}>`,
    '',
  ].join('\n');
}
