/**
 * Jest for the Salesforce record component, with sfdx-lwc-jest's preset: Lightning base components and
 * Lightning Data Service are its stubs and test wire adapters. sfdx-lwc-jest finds components through the
 * sfdx-project.json in the working directory, so this runs from manifests/salesforce (`npm run test:lwc`) and
 * tests the component exactly as the generated project ships it.
 */
const fs = require('node:fs');
const path = require('node:path');
const { jestConfig } = require('@salesforce/sfdx-lwc-jest/config');

const repo = path.resolve(__dirname, '..', '..');
// `--outputFile` (package.json's test:lwc) writes the JSON report here, and Jest does not create the folder.
fs.mkdirSync(path.join(repo, 'test-artifacts'), { recursive: true });

module.exports = {
  ...jestConfig,
  roots: [__dirname],
  testMatch: ['**/*.test.js'],
  testPathIgnorePatterns: ['/node_modules/'],
  cacheDirectory: path.join(repo, 'node_modules', '.cache', 'jest-lwc'),
};
