"""An author-year bibliography for sphinxcontrib-bibtex: the list's labels match the citations.

sphinxcontrib-bibtex's ``author_year`` reference style writes "Schroeder et al. (2006)" in the
text, but pybtex's formatting styles label the list [1], [2], ... This style keeps pybtex's
``plain`` formatting and replaces its labels with the same author and year, sorted by author,
year and title. An entry with no author (the source chapter, documentation pages) is labelled by
its organisation or by the first words of its title; one with no year says "n.d." only when it
truly has none.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as Plain
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle


def _surname(person) -> str:
    return " ".join(person.prelast_names + person.last_names).replace("{", "").replace("}", "")


def _who(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if len(people) == 1:
        return _surname(people[0])
    if len(people) == 2:
        return f"{_surname(people[0])} and {_surname(people[1])}"
    if people:
        return f"{_surname(people[0])} et al."
    title = entry.fields.get("shorttitle") or entry.fields.get("title", "?")
    return " ".join(title.replace("{", "").replace("}", "").split()[:3])


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        seen: dict[str, int] = {}
        for entry in sorted_entries:
            label = f"{_who(entry)} {entry.fields.get('year', 'n.d.')}"
            seen[label] = seen.get(label, 0) + 1
            yield label if seen[label] == 1 else f"{label}{chr(ord('a') + seen[label] - 1)}"


class AuthorYearTitleSorting(AuthorYearTitle):
    """pybtex's author-year-title order, with an organisation (a brace-protected name such as
    ``{{NVIDIA}}``) sorted by its letters, not after "Zhong" for its brace, and "The Kubernetes
    Authors" under K."""

    def person_key(self, person):
        key = super().person_key(person).replace("{", "").replace("}", "")
        return key[4:] if key.lower().startswith("the ") else key

    def sorting_key(self, entry):
        author, year, title = super().sorting_key(entry)
        return (author.lower(), year, title.replace("{", "").replace("}", "").lower())


class AuthorYearStyle(Plain):
    default_label_style = AuthorYearLabels
    default_sorting_style = "replicaplan_author_year_title"


def register() -> None:
    register_plugin("pybtex.style.sorting", "replicaplan_author_year_title", AuthorYearTitleSorting)
    register_plugin("pybtex.style.formatting", "replicaplan_author_year", AuthorYearStyle)
