// MathJax 2.7's configuration, read by MathJax.js when it loads (tools/docs_site.py puts this script in
// every page's head). The MathJax copied into the site (the jupyter-server-mathjax package) carries the
// STIX-Web fonts only: ask for those, never for the TeX or image fonts it would fetch and not find. Its
// font-detection face "MathJax_Blank" points at about:blank, which Chromium refuses with a console error;
// a local() source that is never there fails the same way, quietly.
window.MathJax = {
  "HTML-CSS": {
    availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null,
    styles: {"@font-face": {"font-family": "MathJax_Blank", src: "local('MathJax_Blank')"}},
  },
  messageStyle: "none",
};
