"""The version of dperm, in a leaf: ``dperm/__init__`` re-exports it, and the modules that
need it (the warm-up's marker, ``dperm --version``) import it from here, not from the
package they belong to."""

__version__ = "0.1.1"
