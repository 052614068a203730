// The toolbar's search box: completions by name or op type as one types, arrow keys to move
// among them, Enter or a click to jump to one.

import { h } from "./dom.js";
import { cleanText } from "./draw.js";

export class SearchBox {
  // `choose(i)`: what picking member i does (the viewer jumps to it).
  constructor(app, choose) {
    this.app = app;
    this.onChoose = choose;
    this.input = h("input", { type: "search", placeholder: "Search names or op types  /",
      "aria-label": "search", autocomplete: "off", spellcheck: "false" });
    this.completions = h("ul", { class: "completions", role: "listbox" });
    this.input.addEventListener("input", () => this.update());
    this.input.addEventListener("keydown", (ev) => this.key(ev));
    this.input.addEventListener("blur", () => setTimeout(() => this.hide(), 150));
    this.element = h("div", { class: "search" }, this.input, this.completions);
  }

  // The `/` key: type a new search.
  focus() {
    this.input.focus();
    this.input.select();
  }

  update() {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      const app = this.app;
      const g = app.g;
      const hits = app.search(this.input.value, 30);
      this.active = hits.length ? 0 : -1;
      this.hits = hits;
      this.completions.replaceChildren(...hits.map((i, k) => h("li", {
        role: "option", class: k === 0 ? "active" : "", title: g.name[i],
        onmousedown: (ev) => {
          ev.preventDefault();
          this.choose(i);
        },
      }, h("span", { class: "c-label" }, cleanText(g.label[i], 60)),
      h("span", { class: "c-kind" }, g.isGroup(i) ? g.kindName(i) : g.opType(i)),
      h("span", { class: "c-name" }, cleanText(g.name[i], 160)))));
      this.completions.classList.toggle("open", hits.length > 0);
    }, 60);
  }

  hide() {
    this.completions.classList.remove("open");
  }

  key(ev) {
    const items = this.completions.children;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (!items.length) return;
      items[this.active]?.classList.remove("active");
      this.active = (this.active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) %
        items.length;
      items[this.active].classList.add("active");
      items[this.active].scrollIntoView({ block: "nearest" });
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      clearTimeout(this.searchTimer);
      const hits = this.hits && this.hits.length ? this.hits
        : this.app.search(this.input.value, 1);
      const i = hits[Math.max(0, this.active || 0)];
      if (i !== undefined) this.choose(i);
    } else if (ev.key === "Escape") {
      this.input.value = "";
      this.hide();
      this.input.blur();
    }
  }

  choose(i) {
    this.hide();
    this.input.blur();
    this.onChoose(i);
  }
}
