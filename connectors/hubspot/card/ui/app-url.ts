/**
 * The connector's public URL the card calls. The manifest generator writes this file into the HubSpot project
 * with the `--app-url` it is given; this copy holds the generator's placeholder.
 */
export const APP_URL = 'https://report-connector.example.com';
