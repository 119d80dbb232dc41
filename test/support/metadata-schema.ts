import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { XMLParser } from 'fast-xml-parser';
import ts from 'typescript';

/**
 * The Metadata API's types as Salesforce publishes them: `@salesforce/types` (forcedotcom/wsdl) generates
 * lib/metadata.d.ts from the Metadata WSDL, one `export type` per complex type, its properties in the WSDL's
 * sequence and a base type (`Metadata & {...}`) first, and string enumerations as unions of literals. This reads
 * that file with the TypeScript parser and checks a source-format XML file against it: every element a member
 * of its type, in the type's order, the type's required elements present, enumerations among their values,
 * booleans and numbers well formed.
 * source-deploy-retrieve converts files without looking at element names, so this is the check that sees them.
 */

export interface SchemaProblem {
  path: string;
  problem: string;
}

type PropertyType =
  | { kind: 'primitive'; name: 'string' | 'number' | 'boolean' }
  | { kind: 'complex'; name: string }
  | { kind: 'enum'; name: string };

interface ComplexType {
  /** Element names in declaration order. */
  order: string[];
  properties: Map<string, PropertyType>;
  /**
   * Elements the type requires: declared without `?` and not a list (the generator types every list as
   * required, though the WSDL lets a list be empty).
   */
  required: Set<string>;
}

export interface MetadataSchema {
  complex: Map<string, ComplexType>;
  enums: Map<string, Set<string>>;
  source: string;
}

export function metadataTypesFile(): string {
  const require = createRequire(import.meta.url);
  return require.resolve('@salesforce/types/metadata').replace(/\.js$/, '.d.ts');
}

export function loadMetadataSchema(file = metadataTypesFile()): MetadataSchema {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const aliases = new Map<string, ts.TypeNode>();
  for (const statement of sf.statements) {
    if (ts.isTypeAliasDeclaration(statement)) aliases.set(statement.name.text, statement.type);
  }
  const enums = new Map<string, Set<string>>();
  for (const [name, node] of aliases) {
    if (ts.isUnionTypeNode(node) && node.types.every((t) => ts.isLiteralTypeNode(t))) {
      enums.set(
        name,
        new Set(node.types.map((t) => ((t as ts.LiteralTypeNode).literal as ts.StringLiteral).text)),
      );
    }
  }
  const propertyType = (node: ts.TypeNode): PropertyType => {
    const inner = ts.isArrayTypeNode(node) ? node.elementType : node;
    if (inner.kind === ts.SyntaxKind.StringKeyword) return { kind: 'primitive', name: 'string' };
    if (inner.kind === ts.SyntaxKind.NumberKeyword) return { kind: 'primitive', name: 'number' };
    if (inner.kind === ts.SyntaxKind.BooleanKeyword) return { kind: 'primitive', name: 'boolean' };
    if (ts.isTypeReferenceNode(inner) && ts.isIdentifier(inner.typeName)) {
      const name = inner.typeName.text;
      return enums.has(name) ? { kind: 'enum', name } : { kind: 'complex', name };
    }
    return { kind: 'primitive', name: 'string' };
  };
  const complex = new Map<string, ComplexType>();
  const members = (node: ts.TypeNode, into: ComplexType): void => {
    if (ts.isIntersectionTypeNode(node)) {
      for (const part of node.types) members(part, into);
    } else if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
      const base = aliases.get(node.typeName.text);
      if (base) members(base, into);
    } else if (ts.isTypeLiteralNode(node)) {
      for (const m of node.members) {
        if (!ts.isPropertySignature(m) || !m.type || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)))
          continue;
        into.order.push(m.name.text);
        into.properties.set(m.name.text, propertyType(m.type));
        if (!m.questionToken && !ts.isArrayTypeNode(m.type)) into.required.add(m.name.text);
      }
    }
  };
  for (const [name, node] of aliases) {
    if (enums.has(name)) continue;
    const type: ComplexType = { order: [], properties: new Map(), required: new Set() };
    members(node, type);
    if (type.order.length > 0) complex.set(name, type);
  }
  return { complex, enums, source: file };
}

type OrderedNode = Record<string, unknown>;

const orderedParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  parseTagValue: false,
  trimValues: true,
});

function elementName(node: OrderedNode): string | undefined {
  return Object.keys(node).find((k) => k !== ':@' && k !== '#text' && k !== '?xml');
}

function textOf(children: OrderedNode[]): string {
  return children.map((c) => (typeof c['#text'] === 'string' ? c['#text'] : '')).join('');
}

export interface CheckOptions {
  /** Types whose element order is not checked (their files follow a schema of their own; see the caller). */
  unordered?: ReadonlySet<string>;
}

function checkElement(
  schema: MetadataSchema,
  typeName: string,
  children: OrderedNode[],
  path: string,
  problems: SchemaProblem[],
  options: CheckOptions,
): void {
  const type = schema.complex.get(typeName);
  if (!type) {
    problems.push({ path, problem: `${typeName} is not a type of the Metadata API` });
    return;
  }
  let lastIndex = -1;
  let lastName = '';
  const seen = new Set(children.map(elementName).filter((n) => n !== undefined));
  for (const name of type.required) {
    if (!seen.has(name)) problems.push({ path, problem: `${typeName} requires ${name}` });
  }
  for (const child of children) {
    const name = elementName(child);
    if (!name) continue;
    const at = `${path}/${name}`;
    const index = type.order.indexOf(name);
    if (index < 0) {
      problems.push({ path: at, problem: `${name} is not an element of ${typeName}` });
      continue;
    }
    if (index < lastIndex && !options.unordered?.has(typeName)) {
      problems.push({ path: at, problem: `${name} comes after ${lastName}; ${typeName} orders it before` });
    }
    if (index >= lastIndex) {
      lastIndex = index;
      lastName = name;
    }
    const inner = (child[name] as OrderedNode[] | undefined) ?? [];
    const declared = type.properties.get(name)!;
    if (declared.kind === 'complex') {
      checkElement(schema, declared.name, inner, at, problems, options);
      continue;
    }
    // A string-typed element may carry markup the WSDL keeps opaque (an LWC bundle's targetConfigs).
    if (declared.kind === 'primitive' && declared.name === 'string') continue;
    const value = textOf(inner);
    if (declared.kind === 'enum') {
      if (!schema.enums.get(declared.name)!.has(value))
        problems.push({ path: at, problem: `${value} is not a value of ${declared.name}` });
    } else if (declared.name === 'boolean' && value !== 'true' && value !== 'false') {
      problems.push({ path: at, problem: `${value} is not a boolean` });
    } else if (declared.name === 'number' && (value === '' || !Number.isFinite(Number(value)))) {
      problems.push({ path: at, problem: `${value} is not a number` });
    }
  }
}

/** Every element of a source-format metadata file checked against the type its root element names. */
export function checkMetadataXml(
  schema: MetadataSchema,
  xml: string,
  path = '',
  options: CheckOptions = {},
): SchemaProblem[] {
  const doc = orderedParser.parse(xml) as OrderedNode[];
  const root = doc.find((n) => elementName(n) !== undefined);
  if (!root) return [{ path, problem: 'no root element' }];
  const name = elementName(root)!;
  const problems: SchemaProblem[] = [];
  checkElement(schema, name, (root[name] as OrderedNode[]) ?? [], `${path}:${name}`, problems, options);
  return problems;
}
