// Enhancements only: every page works without this file (a destructive form then posts unconfirmed and
// the server answers with a confirmation page; the slider stays hidden and the date field does its job).
(function () {
  function days(a, b) { return Math.round((Date.parse(b) - Date.parse(a)) / 86400000); }
  function iso(start, n) { return new Date(Date.parse(start) + n * 86400000).toISOString().slice(0, 10); }

  // The "as of" slider moves the date field day by day; letting go of it asks for that day.
  function wireSlider() {
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
      if (slider.dataset.submit) { field.form.submit(); return; }
      field.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }

  // Ticked facts: a count beside "Delete selected", and a box that ticks the whole page.
  function selected() { return document.querySelectorAll('input[name="fact_id"][form="bulk"]:checked'); }
  function showCount() {
    var count = document.getElementById("selected-count");
    var n = selected().length;
    if (count) count.textContent = n ? n + " selected" : "";
  }
  function wireSelection() {
    var all = document.getElementById("select-all");
    if (!all || all.dataset.wired) return;
    all.dataset.wired = "1";
    all.hidden = false;
    all.addEventListener("change", function () {
      document.querySelectorAll('input[name="fact_id"][form="bulk"]').forEach(function (box) { box.checked = all.checked; });
      showCount();
    });
    showCount();
  }
  document.addEventListener("change", function (e) { if (e.target.name === "fact_id") showCount(); });

  // One confirmation dialog for every form marked data-confirm.
  var pending = null;
  function dialog() { return document.getElementById("confirm-dialog"); }
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches || !form.matches("form[data-confirm]") || form.dataset.confirmed === "1") return;
    var box = dialog();
    if (!box || typeof box.showModal !== "function") return;   // the server confirms instead
    e.preventDefault();
    var text = form.dataset.confirm;
    var ok = document.getElementById("confirm-ok");
    if (form.id === "bulk") {
      var n = selected().length;
      text = n ? "Delete " + n + " selected fact" + (n === 1 ? "" : "s") + "? They leave every live view and stay in the history."
               : "Tick the facts to delete first.";
      ok.hidden = n === 0;
    } else {
      ok.hidden = false;
    }
    document.getElementById("confirm-text").textContent = text;
    pending = form;
    box.showModal();
  });
  document.addEventListener("click", function (e) {
    var box = dialog();
    if (!box) return;
    if (e.target.id === "confirm-cancel") { pending = null; box.close(); }
    if (e.target.id === "confirm-ok" && pending) {
      var form = pending;
      pending = null;
      var flag = document.createElement("input");
      flag.type = "hidden"; flag.name = "confirmed"; flag.value = "yes";
      form.appendChild(flag);
      form.dataset.confirmed = "1";
      box.close();
      form.submit();
    }
  });

  function wire() { wireSlider(); wireSelection(); }
  document.addEventListener("DOMContentLoaded", wire);
  document.addEventListener("htmx:afterSettle", wire);
})();
