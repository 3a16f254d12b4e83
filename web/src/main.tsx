// Entry of the web UI bundle (web/dist/app.js).
import { render } from "preact";
import { App } from "./app";
import "./styles.css";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
