"""``Config`` (Keras 3's ``keras.src.utils.config``): a dict of settings read and written as
attributes, which can be frozen against changes.

>>> config = Config(learning_rate=0.1)
>>> config.epochs = 3
>>> config.learning_rate, config["epochs"], sorted(config)
(0.1, 3, ['epochs', 'learning_rate'])
"""

import copy
import difflib
import json


class Config:
    """A settings dict with attribute access (``config.name``) and ``freeze``/``unfreeze``.

    Args:
        **kwargs: the initial settings.
    """

    __attrs__ = None

    def __init__(self, **kwargs):
        self._config = kwargs
        self._frozen = False
        # Names that are the object's own (methods, properties); everything else is a setting.
        self.__attrs__ = set(dir(self))

    @property
    def frozen(self):
        """Whether changes raise a ValueError."""
        return self._frozen

    def freeze(self):
        """Makes the settings read-only."""
        self._frozen = True

    def unfreeze(self):
        """Makes the settings writable again."""
        self._frozen = False

    def _raise_if_frozen(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        """A shallow copy of the settings as a dict."""
        return copy.copy(self._config)

    def to_json(self):
        """The settings as a JSON string."""
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def pop(self, *args):
        self._raise_if_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._raise_if_frozen()
        return self._config.update(*args, **kwargs)

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def __setattr__(self, name, value):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__setattr__(self, name, value)
        self._raise_if_frozen()
        self._config[name] = value
        return None

    def __getattr__(self, name):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__getattribute__(self, name)
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        message = f"Unknown attribute: '{name}'."
        matches = difflib.get_close_matches(name, config.keys(), n=1, cutoff=0.7)
        if matches:
            message += f" Did you mean '{matches[0]}'?"
        raise AttributeError(message)

    def __setitem__(self, key, item):
        self._raise_if_frozen()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._raise_if_frozen()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config

    def __iter__(self):
        yield from sorted(self._config)

    def __len__(self):
        return len(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"
