// The course's figures (tools/docs_site.py, mkdocs.yml `extra_javascript`): a figure that the column shows
// narrower than it was drawn gets the class `tfm-zoomable`, and a click opens it at its full size over the
// page; a click anywhere or Escape closes it. A figure drawn at 2x (tools/make_course.py) carries the width to
// show it at in its `width` attribute: that, not its pixel count, is its full size.
(function () {
  function drawn(img) {
    var width = parseFloat(img.getAttribute("width"));
    return width > 0 ? width : img.naturalWidth;
  }
  function mark() {
    document.querySelectorAll(".jp-RenderedImage img").forEach(function (img) {
      var narrower = img.naturalWidth > 0 && img.getBoundingClientRect().width < drawn(img) - 1;
      img.classList.toggle("tfm-zoomable", narrower);
      img.title = narrower ? "Click to enlarge" : "";
    });
  }
  function close() {
    var open = document.querySelector(".tfm-zoom");
    if (open) open.remove();
  }
  document.addEventListener("click", function (event) {
    var img = event.target.closest && event.target.closest("img.tfm-zoomable");
    if (document.querySelector(".tfm-zoom")) { close(); return; }
    if (!img) return;
    var overlay = document.createElement("div");
    overlay.className = "tfm-zoom";
    overlay.setAttribute("role", "dialog");
    var copy = document.createElement("img");
    copy.src = img.src;
    copy.alt = img.alt;
    copy.width = drawn(img);
    overlay.appendChild(copy);
    document.body.appendChild(overlay);
  });
  document.addEventListener("keydown", function (event) { if (event.key === "Escape") close(); });
  window.addEventListener("load", mark);
  window.addEventListener("resize", mark);
})();
