/** The connector's public URL the card calls (written by the manifest generator). */
export const APP_URL = "https://report-connector.example.com";
