/**
 * The browser side of the demo's component preview (/preview/components), bundled by ./bundle.ts: every state
 * of the HubSpot app card, drawn by HubSpot's test renderer from the card's own module and mapped to HTML, and
 * every state of the Salesforce reportScore component, mounted by the LWC engine with the Jest tests' own
 * states, stubs and text reader. Nothing here is what a CRM shows pixel for pixel: each state is a preview.
 */

// Resolved by ./bundle.ts to test/lwc/report-score-states.js, the module the Jest tests render states with.
import { renderState, STATES, stateText } from 'preview:lwc-states';
import { cardStateHtml } from '../../connectors/hubspot/card/ui/card-preview.tsx';
import { CARD_SAMPLES } from '../../connectors/hubspot/card/ui/card-samples.ts';

function label(text) {
  const heading = document.createElement('h3');
  heading.className = 'state-label';
  heading.textContent = text;
  return heading;
}

function showCard() {
  const area = document.getElementById('hubspot-card-states');
  for (const [name, state] of Object.entries(CARD_SAMPLES)) {
    const figure = document.createElement('figure');
    figure.className = 'state';
    figure.append(label(`Preview: ${name}`));
    const frame = document.createElement('div');
    frame.className = 'card-frame';
    frame.dataset.cardState = name;
    // cardStateHtml escapes every text and attribute it writes.
    frame.innerHTML = cardStateHtml(state);
    figure.append(frame);
    area.append(figure);
  }
}

/**
 * The test wire adapter sends each record to every connected component, so the states are rendered one at a
 * time as in the Jest tests (`renderState` mounts at the end of the body; each is taken out before the next
 * state is sent), then all are put back in their figures. Put back, a component keeps the record it was given
 * (nothing is sent again), and the preview test reads the text of what is on the page then.
 */
async function showLwc() {
  const rendered = [];
  for (const name of Object.keys(STATES)) {
    const element = await renderState(name);
    element.remove();
    element.dataset.lwcState = name;
    rendered.push([name, element]);
  }
  const area = document.getElementById('salesforce-lwc-states');
  for (const [name, element] of rendered) {
    const figure = document.createElement('figure');
    figure.className = 'state';
    figure.append(label(`Preview: ${name}`), element);
    area.append(figure);
  }
}

showCard();
showLwc().then(
  () => {
    // For the preview test: the same text reader the Jest tests use, over what this page shows.
    window.lwcStateText = (name) => stateText(document.querySelector(`[data-lwc-state="${name}"]`));
    document.body.dataset.ready = 'true';
  },
  (error) => {
    document.body.dataset.ready = 'failed';
    document.body.append(label(`The Salesforce preview failed: ${error.message}`));
  },
);
