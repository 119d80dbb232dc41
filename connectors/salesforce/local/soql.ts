/**
 * The slice of SOQL the local Salesforce understands: `SELECT f, ... FROM Obj [WHERE ...] [ORDER BY f [ASC|DESC]
 * [NULLS FIRST|LAST], ...] [LIMIT n]`, with AND/OR/NOT, parentheses, comparisons, IN / NOT IN and LIKE, and
 * literals as Salesforce writes them (backslash-escaped strings, unquoted date-times, numbers, TRUE/FALSE/NULL).
 * Anything else is a MALFORMED_QUERY, as it would be for a statement Salesforce cannot parse. Test tool only.
 */

export class SoqlError extends Error {
  constructor(
    readonly errorCode: 'MALFORMED_QUERY' | 'INVALID_FIELD' | 'INVALID_TYPE',
    message: string,
  ) {
    super(message);
    this.name = 'SoqlError';
  }
}

export type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'datetime'; value: number }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' };

export type Condition =
  | { kind: 'and' | 'or'; items: Condition[] }
  | { kind: 'not'; item: Condition }
  | { kind: 'compare'; field: string; op: '=' | '!=' | '<' | '<=' | '>' | '>=' | 'LIKE'; value: Literal }
  | { kind: 'in'; field: string; negated: boolean; values: Literal[] };

export interface OrderTerm {
  field: string;
  descending: boolean;
  nullsLast: boolean;
}

export interface SoqlQuery {
  fields: string[];
  object: string;
  where: Condition | null;
  orderBy: OrderTerm[];
  limit: number | null;
}

type Token =
  | { t: 'ident'; v: string }
  | { t: 'string'; v: string }
  | { t: 'datetime'; v: number }
  | { t: 'number'; v: number }
  | { t: 'op'; v: string }
  | { t: 'punct'; v: '(' | ')' | ',' };

const STRING_ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
  '"': '"',
  "'": "'",
  '\\': '\\',
  _: '\\_',
  '%': '\\%',
};

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})/;

/** Splits a statement into tokens; exported so tests can check how a quoted literal reads back. */
export function tokenize(soql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < soql.length) {
    const ch = soql[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= soql.length) throw new SoqlError('MALFORMED_QUERY', 'unterminated string literal');
        const c = soql[i]!;
        if (c === '\\') {
          const next = soql[i + 1];
          const mapped = next === undefined ? undefined : STRING_ESCAPES[next];
          if (mapped === undefined)
            throw new SoqlError('MALFORMED_QUERY', `Invalid string literal escape \\${next ?? ''}`);
          value += mapped;
          i += 2;
          continue;
        }
        if (c === "'") {
          i++;
          break;
        }
        value += c;
        i++;
      }
      tokens.push({ t: 'string', v: value });
      continue;
    }
    const dt = DATETIME.exec(soql.slice(i));
    if (dt) {
      const ms = Date.parse(dt[0]);
      if (Number.isNaN(ms)) throw new SoqlError('MALFORMED_QUERY', `invalid date-time ${dt[0]}`);
      tokens.push({ t: 'datetime', v: ms });
      i += dt[0].length;
      continue;
    }
    const num = /^-?\d+(?:\.\d+)?/.exec(soql.slice(i));
    if (num && (ch !== '-' || tokens.at(-1)?.t === 'op')) {
      tokens.push({ t: 'number', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const op = /^(<=|>=|!=|<>|=|<|>)/.exec(soql.slice(i));
    if (op) {
      tokens.push({ t: 'op', v: op[0] === '<>' ? '!=' : op[0] });
      i += op[0].length;
      continue;
    }
    if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ t: 'punct', v: ch });
      i++;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(soql.slice(i));
    if (ident) {
      tokens.push({ t: 'ident', v: ident[0] });
      i += ident[0].length;
      continue;
    }
    throw new SoqlError('MALFORMED_QUERY', `unexpected character ${JSON.stringify(ch)} at column ${i + 1}`);
  }
  return tokens;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private keyword(word: string): boolean {
    const tok = this.peek();
    if (tok?.t === 'ident' && tok.v.toUpperCase() === word) {
      this.i++;
      return true;
    }
    return false;
  }

  private expectKeyword(word: string): void {
    if (!this.keyword(word)) throw new SoqlError('MALFORMED_QUERY', `expected ${word}`);
  }

  private punct(p: '(' | ')' | ','): boolean {
    const tok = this.peek();
    if (tok?.t === 'punct' && tok.v === p) {
      this.i++;
      return true;
    }
    return false;
  }

  private ident(): string {
    const tok = this.peek();
    if (tok?.t !== 'ident') throw new SoqlError('MALFORMED_QUERY', 'expected a field or object name');
    this.i++;
    return tok.v;
  }

  parse(): SoqlQuery {
    this.expectKeyword('SELECT');
    const fields = [this.ident()];
    while (this.punct(',')) fields.push(this.ident());
    this.expectKeyword('FROM');
    const object = this.ident();
    const where = this.keyword('WHERE') ? this.orExpr() : null;
    const orderBy: OrderTerm[] = [];
    if (this.keyword('ORDER')) {
      this.expectKeyword('BY');
      do {
        const field = this.ident();
        let descending = false;
        if (this.keyword('DESC')) descending = true;
        else this.keyword('ASC');
        let nullsLast = descending;
        if (this.keyword('NULLS')) {
          if (this.keyword('LAST')) nullsLast = true;
          else if (this.keyword('FIRST')) nullsLast = false;
          else throw new SoqlError('MALFORMED_QUERY', 'expected FIRST or LAST after NULLS');
        }
        orderBy.push({ field, descending, nullsLast });
      } while (this.punct(','));
    }
    let limit: number | null = null;
    if (this.keyword('LIMIT')) {
      const tok = this.peek();
      if (tok?.t !== 'number' || !Number.isInteger(tok.v) || tok.v < 0) {
        throw new SoqlError('MALFORMED_QUERY', 'LIMIT needs a whole number');
      }
      this.i++;
      limit = tok.v;
    }
    if (this.i < this.tokens.length)
      throw new SoqlError('MALFORMED_QUERY', 'unexpected token after the statement');
    return { fields, object, where, orderBy, limit };
  }

  private orExpr(): Condition {
    const items = [this.andExpr()];
    while (this.keyword('OR')) items.push(this.andExpr());
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  }

  private andExpr(): Condition {
    const items = [this.notExpr()];
    while (this.keyword('AND')) items.push(this.notExpr());
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  private notExpr(): Condition {
    if (this.keyword('NOT')) return { kind: 'not', item: this.notExpr() };
    if (this.punct('(')) {
      const inner = this.orExpr();
      if (!this.punct(')')) throw new SoqlError('MALFORMED_QUERY', 'expected )');
      return inner;
    }
    const field = this.ident();
    if (this.keyword('IN')) return { kind: 'in', field, negated: false, values: this.list() };
    if (this.keyword('NOT')) {
      this.expectKeyword('IN');
      return { kind: 'in', field, negated: true, values: this.list() };
    }
    if (this.keyword('LIKE')) return { kind: 'compare', field, op: 'LIKE', value: this.literal() };
    const tok = this.peek();
    if (tok?.t !== 'op') throw new SoqlError('MALFORMED_QUERY', `expected an operator after ${field}`);
    this.i++;
    return { kind: 'compare', field, op: tok.v as '=', value: this.literal() };
  }

  private list(): Literal[] {
    if (!this.punct('(')) throw new SoqlError('MALFORMED_QUERY', 'expected ( after IN');
    const values = [this.literal()];
    while (this.punct(',')) values.push(this.literal());
    if (!this.punct(')')) throw new SoqlError('MALFORMED_QUERY', 'expected ) to close the IN list');
    return values;
  }

  private literal(): Literal {
    const tok = this.peek();
    if (!tok) throw new SoqlError('MALFORMED_QUERY', 'expected a value');
    this.i++;
    switch (tok.t) {
      case 'string':
        return { kind: 'string', value: tok.v };
      case 'datetime':
        return { kind: 'datetime', value: tok.v };
      case 'number':
        return { kind: 'number', value: tok.v };
      case 'ident': {
        const word = tok.v.toUpperCase();
        if (word === 'NULL') return { kind: 'null' };
        if (word === 'TRUE' || word === 'FALSE') return { kind: 'boolean', value: word === 'TRUE' };
        throw new SoqlError('MALFORMED_QUERY', `unexpected ${tok.v} where a value belongs`);
      }
      default:
        throw new SoqlError('MALFORMED_QUERY', 'expected a value');
    }
  }
}

export function parseSoql(soql: string): SoqlQuery {
  return new Parser(tokenize(soql)).parse();
}

/** Field types the evaluator compares differently. */
export type ColumnKind = 'id' | 'string' | 'datetime' | 'number' | 'boolean';
export type CellValue = string | number | boolean | null;

function compareCells(kind: ColumnKind, a: CellValue, b: CellValue): number {
  if (kind === 'string') return String(a).toLowerCase().localeCompare(String(b).toLowerCase());
  if (kind === 'id') return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  return Number(a) - Number(b);
}

function literalFor(
  kind: ColumnKind,
  literal: Literal,
  field: string,
  canonicalId: (v: string) => string,
): CellValue {
  if (literal.kind === 'null') return null;
  const mismatch = () =>
    new SoqlError('INVALID_TYPE', `value of filter criterion for field '${field}' must be of type ${kind}`);
  switch (kind) {
    case 'id':
      if (literal.kind !== 'string') throw mismatch();
      return canonicalId(literal.value);
    case 'string':
      if (literal.kind !== 'string') throw mismatch();
      return literal.value;
    case 'datetime':
      if (literal.kind !== 'datetime') throw mismatch();
      return literal.value;
    case 'number':
      if (literal.kind !== 'number') throw mismatch();
      return literal.value;
    case 'boolean':
      if (literal.kind !== 'boolean') throw mismatch();
      return literal.value;
  }
}

function likeToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && (pattern[i + 1] === '_' || pattern[i + 1] === '%' || pattern[i + 1] === '\\')) {
      source += `\\${pattern[i + 1]}`;
      i++;
    } else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'is');
}

export interface Schema {
  /** Canonical column name for a case-insensitive name, or undefined when there is no such column. */
  column(name: string): { name: string; kind: ColumnKind } | undefined;
  canonicalId(value: string): string;
}

export function evaluate(condition: Condition, row: Record<string, CellValue>, schema: Schema): boolean {
  switch (condition.kind) {
    case 'and':
      return condition.items.every((c) => evaluate(c, row, schema));
    case 'or':
      return condition.items.some((c) => evaluate(c, row, schema));
    case 'not':
      return !evaluate(condition.item, row, schema);
    case 'in': {
      const col = requireColumn(schema, condition.field);
      const cell = row[col.name] ?? null;
      const hit = condition.values.some((v) => {
        const want = literalFor(col.kind, v, col.name, schema.canonicalId);
        return cell !== null && want !== null && compareCells(col.kind, cell, want) === 0;
      });
      return condition.negated ? !hit : hit;
    }
    case 'compare': {
      const col = requireColumn(schema, condition.field);
      const cell = row[col.name] ?? null;
      if (condition.op === 'LIKE') {
        if (condition.value.kind !== 'string') throw new SoqlError('INVALID_TYPE', 'LIKE needs a string');
        return cell !== null && likeToRegExp(condition.value.value).test(String(cell));
      }
      const want = literalFor(col.kind, condition.value, col.name, schema.canonicalId);
      if (want === null || cell === null) {
        if (condition.op === '=') return cell === want;
        if (condition.op === '!=') return cell !== want;
        return false;
      }
      const cmp = compareCells(col.kind, cell, want);
      switch (condition.op) {
        case '=':
          return cmp === 0;
        case '!=':
          return cmp !== 0;
        case '<':
          return cmp < 0;
        case '<=':
          return cmp <= 0;
        case '>':
          return cmp > 0;
        case '>=':
          return cmp >= 0;
      }
    }
  }
}

export function requireColumn(schema: Schema, name: string): { name: string; kind: ColumnKind } {
  const col = schema.column(name);
  if (!col)
    throw new SoqlError(
      'INVALID_FIELD',
      `No such column '${name}' on entity. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name.`,
    );
  return col;
}

export function sortRows(rows: Record<string, CellValue>[], orderBy: OrderTerm[], schema: Schema): void {
  const terms = orderBy.map((t) => ({ ...t, col: requireColumn(schema, t.field) }));
  rows.sort((a, b) => {
    for (const t of terms) {
      const x = a[t.col.name] ?? null;
      const y = b[t.col.name] ?? null;
      if (x === null && y === null) continue;
      if (x === null) return t.nullsLast ? 1 : -1;
      if (y === null) return t.nullsLast ? -1 : 1;
      const cmp = compareCells(t.col.kind, x, y);
      if (cmp !== 0) return t.descending ? -cmp : cmp;
    }
    return 0;
  });
}
