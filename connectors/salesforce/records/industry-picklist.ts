/**
 * Salesforce's standard Account `Industry` picklist. Every value but "Other" maps to at least one sector of
 * INDUSTRY_SECTORS (test/matching-retrieve.test.ts checks it), so a Salesforce industry is compared, and shown to a
 * reviewer, like any other (src/matching/industries.ts).
 */
export const SALESFORCE_INDUSTRY_PICKLIST = [
  'Agriculture',
  'Apparel',
  'Banking',
  'Biotechnology',
  'Chemicals',
  'Communications',
  'Construction',
  'Consulting',
  'Education',
  'Electronics',
  'Energy',
  'Engineering',
  'Entertainment',
  'Environmental',
  'Finance',
  'Food & Beverage',
  'Government',
  'Healthcare',
  'Hospitality',
  'Insurance',
  'Machinery',
  'Manufacturing',
  'Media',
  'Not For Profit',
  'Other',
  'Recreation',
  'Retail',
  'Shipping',
  'Technology',
  'Telecommunications',
  'Transportation',
  'Utilities',
] as const;
