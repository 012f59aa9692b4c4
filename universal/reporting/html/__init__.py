"""A self-contained HTML view of one run (``route --html``, ``openloop --html``): the network in
its natural layout, packets moving step by step, link queues and loads, the delivery or
latency curves and the table row, in one file that opens from disk without network access.

* :mod:`~universal.reporting.html.layout` places the nodes (levels, grids, force layout);
* :mod:`~universal.reporting.html.data` gathers one run's packets and hops (size limits);
* :mod:`~universal.reporting.html.page` writes the page (``view.js``, ``view.css`` and
  ``template.html`` are package data, inlined into every file).
"""
