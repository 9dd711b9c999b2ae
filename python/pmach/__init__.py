from ._pmach import *  # noqa
