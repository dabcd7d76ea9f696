// Enhancements only: every page works without this file.
// The "as of" slider moves the date field day by day; letting go of it asks for that day.
(function () {
  function days(a, b) { return Math.round((Date.parse(b) - Date.parse(a)) / 86400000); }
  function iso(start, n) { return new Date(Date.parse(start) + n * 86400000).toISOString().slice(0, 10); }
  function wire() {
    var slider = document.getElementById("as_of_slider");
    var field = document.getElementById("as_of");
    if (!slider || !field || slider.dataset.wired) return;
    var first = slider.dataset.first, last = slider.dataset.last;
    if (!first || !last) return;
    slider.dataset.wired = "1";
    slider.max = String(Math.max(0, days(first, last)));
    slider.value = field.value ? String(Math.min(+slider.max, Math.max(0, days(first, field.value)))) : slider.max;
    slider.hidden = false;
    slider.addEventListener("input", function () {
      field.value = iso(first, +slider.value);
      slider.setAttribute("aria-valuetext", field.value);
    });
    slider.addEventListener("change", function () {
      field.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }
  document.addEventListener("DOMContentLoaded", wire);
  document.addEventListener("htmx:afterSettle", wire);
})();
