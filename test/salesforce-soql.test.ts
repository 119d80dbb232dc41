import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { soqlDateTime, soqlIdList, soqlLikeContains, soqlQuote } from '../connectors/salesforce/api/soql.js';
import { evaluate, parseSoql, tokenize } from '../connectors/salesforce/local/soql.js';
import { isSalesforceId, toId18 } from '../connectors/salesforce/records/ids.js';

// The local Salesforce's tokenizer reads literals by Salesforce's escaping rules; a quoted value must come
// back as exactly one string token holding the original text, whatever the text is.
describe('soqlQuote', () => {
  it('round-trips any string as one literal', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (value) => {
        const tokens = tokenize(soqlQuote(value));
        expect(tokens).toEqual([{ t: 'string', v: value }]);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps hostile values inside the WHERE clause', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom("'", '\\', ' ', 'O', 'R', '1', '=', '\n', ')', '(', 'x'),
          maxLength: 40,
        }),
        (value) => {
          const q = parseSoql(`SELECT Id FROM Account WHERE Report_Slug__c = ${soqlQuote(value)} LIMIT 1`);
          expect(q.where).toEqual({
            kind: 'compare',
            field: 'Report_Slug__c',
            op: '=',
            value: { kind: 'string', value },
          });
          expect(q.limit).toBe(1);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('escapes backslash before quote, so an escaped quote cannot be unescaped', () => {
    expect(soqlQuote("a\\'b")).toBe("'a\\\\\\'b'");
    expect(soqlQuote("' OR Name != '")).toBe("'\\' OR Name != \\''");
  });
});

describe('soqlDateTime', () => {
  it('writes UTC whole seconds with Z, unquoted', () => {
    expect(soqlDateTime('2024-05-01T14:30:15.789+02:00')).toBe('2024-05-01T12:30:15Z');
    expect(soqlDateTime(new Date(Date.UTC(1999, 0, 2, 3, 4, 5)))).toBe('1999-01-02T03:04:05Z');
  });

  it('is read back by the SOQL tokenizer as the same instant (to the second)', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }),
        (d) => {
          const [token] = tokenize(soqlDateTime(d));
          expect(token).toEqual({ t: 'datetime', v: Math.floor(d.getTime() / 1000) * 1000 });
        },
      ),
    );
  });

  it('refuses text that is not a date-time', () => {
    expect(() => soqlDateTime("2024-01-01' OR Id != '")).toThrow(/not a date-time/);
  });
});

describe('Salesforce ids', () => {
  const id15 = fc.string({
    unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    minLength: 15,
    maxLength: 15,
  });

  it('accepts a 15-character id and its 18-character form', () => {
    fc.assert(
      fc.property(id15, (id) => {
        const long = toId18(id);
        expect(long).toHaveLength(18);
        expect(long.startsWith(id)).toBe(true);
        expect(isSalesforceId(long)).toBe(true);
        expect(toId18(long)).toBe(long);
      }),
    );
  });

  it('rejects an 18-character id whose suffix does not encode the case of the first 15', () => {
    fc.assert(
      fc.property(id15, fc.integer({ min: 0, max: 14 }), (id, at) => {
        const c = id[at]!;
        fc.pre(c.toLowerCase() !== c.toUpperCase());
        const flipped =
          id.slice(0, at) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + id.slice(at + 1);
        expect(isSalesforceId(flipped + toId18(id).slice(15))).toBe(false);
      }),
    );
  });

  // Worked out by hand: chunks 001A0 / 00000 / 6Vm9r have capitals at bit 3 / none / bit 1 -> I, A, C.
  it('computes the suffix Salesforce uses', () => {
    expect(toId18('001A0000006Vm9r')).toBe('001A0000006Vm9rIAC');
    expect(isSalesforceId('001A0000006Vm9rIAC')).toBe(true);
    expect(isSalesforceId('001A0000006Vm9rIAD')).toBe(false);
  });

  it('never lets anything but an id into an IN list', () => {
    expect(soqlIdList(['001A0000006Vm9r'])).toBe("('001A0000006Vm9rIAC')");
    expect(() => soqlIdList(["001A0000006Vm9r') OR Id != ('"])).toThrow(/not a Salesforce id/);
    expect(() => soqlIdList([])).toThrow();
  });
});

// Issue 31: the admin's search by name. `\%` and `\_` are escapes of the literal itself in SOQL, so the typed
// wildcard characters must reach the statement as exactly that, with quotes and backslashes escaped as usual.
describe('soqlLikeContains', () => {
  it('escapes quotes, backslashes, % and _ in the statement text', () => {
    expect(soqlLikeContains("O'Brien 50%_a\\b")).toBe("'%O\\'Brien 50\\%\\_a\\\\\\\\b%'");
  });

  it('matches exactly the names that contain the value, whatever it holds', () => {
    const schema = {
      column: (name: string) =>
        name.toLowerCase() === 'name' ? { name: 'Name', kind: 'string' as const } : undefined,
      canonicalId: (v: string) => v,
    };
    const unit = fc.constantFrom("'", '\\', '%', '_', 'a', 'B', ' ', '.', '*');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 6 }), fc.string({ unit, maxLength: 12 }), (value, name) => {
        const q = parseSoql(`SELECT Id FROM Account WHERE Name LIKE ${soqlLikeContains(value)}`);
        const matched = evaluate(q.where!, { Name: name }, schema);
        expect(matched).toBe(name.toLowerCase().includes(value.toLowerCase()));
      }),
      { numRuns: 2000 },
    );
  });
});
