import type { IncomingMessage, ServerResponse } from 'node:http';
import { bundleComponentPreview } from './bundle.js';

/**
 * The demo's component preview at `/preview/components`: every state of the HubSpot app card and of the
 * Salesforce reportScore component, drawn in the browser from the components' own modules (./components-page.js,
 * bundled on the first request). Served by the local system beside the connector's routes, never by production.
 */

export const PREVIEW_PATH = '/preview/components';
const SCRIPT_PATH = `${PREVIEW_PATH}/preview.js`;

// The LWC engine and the card's HTML set styles from script; nothing here loads from elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Component previews: HubSpot app card and Salesforce reportScore</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; padding: 16px 24px; color: #1d2a38; background: #f3f5f8; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  h2 { font-size: 17px; margin: 0 0 4px; }
  .lead { margin: 0 0 16px; max-width: 70em; }
  section.component { margin: 0 0 24px; padding: 12px 0; }
  .states { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 12px; align-items: start; }
  figure.state { margin: 0; background: #fff; border: 1px solid #cbd6e2; border-radius: 6px; padding: 8px 12px; }
  .state-label { font-size: 12px; font-weight: 600; margin: 0 0 6px; padding: 2px 6px; display: inline-block;
    color: #5c3d00; background: #fff1cc; border: 1px dashed #b98900; border-radius: 4px; }
  .report-card h3 { font-size: 15px; margin: 4px 0; }
  .report-card p { margin: 4px 0; }
  .report-card label { display: block; margin: 2px 0; }
  .report-card meter { width: 120px; vertical-align: middle; }
  .report-card .tag { display: inline-block; padding: 0 6px; border-radius: 3px; background: #e5f5f8; border: 1px solid #7fd1de; font-size: 12px; }
  .report-card .alert { margin: 6px 0; padding: 6px 8px; border-left: 4px solid #d9822b; background: #fef8f0; }
  .report-card .alert-danger, .report-card .alert-error { border-color: #c93f3f; background: #fdf0f0; }
  .report-card button { margin: 4px 6px 4px 0; }
  .report-card fieldset { border: 1px solid #cbd6e2; margin: 6px 0; }
  .report-card hr { border: 0; border-top: 1px solid #cbd6e2; }
  #salesforce-lwc-states { grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); }
  c-report-score { display: block; }
</style>
</head>
<body>
<h1>Component previews</h1>
<p class="lead">Every state of the two components sellers see, each labelled <strong>Preview</strong>: drawn here
from the components' own code with the states their tests use, not inside HubSpot or Salesforce, so the look is
this page's, not the CRM's. The card's states come from HubSpot's test renderer mapped to HTML; the Salesforce
component is rendered by the LWC engine with the Jest tests' stubs of Lightning Data Service.</p>
<section class="component" id="hubspot-card" aria-labelledby="hubspot-card-title">
<h2 id="hubspot-card-title">HubSpot app card (company record), preview</h2>
<div class="states" id="hubspot-card-states"></div>
</section>
<section class="component" id="salesforce-lwc" aria-labelledby="salesforce-lwc-title">
<h2 id="salesforce-lwc-title">Salesforce reportScore (Account record page), preview</h2>
<div class="states" id="salesforce-lwc-states"></div>
</section>
<script src="${SCRIPT_PATH}"></script>
</body>
</html>
`;

/**
 * Answers the preview's two paths and says whether it did; every other request is left to the connector.
 * The script is bundled once per process (about a second).
 */
export function createComponentPreview(): (req: IncomingMessage, res: ServerResponse) => boolean {
  let script: Promise<string> | null = null;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== PREVIEW_PATH && path !== SCRIPT_PATH)) return false;
    const headers = {
      'content-security-policy': CSP,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    };
    if (path === PREVIEW_PATH) {
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return true;
    }
    script ??= bundleComponentPreview();
    script.then(
      (text) =>
        res.writeHead(200, { ...headers, 'content-type': 'text/javascript; charset=utf-8' }).end(text),
      (error: Error) => {
        script = null;
        res
          .writeHead(503, { ...headers, 'content-type': 'text/plain; charset=utf-8' })
          .end(`The component preview could not be built: ${error.message}\n`);
      },
    );
    return true;
  };
}
