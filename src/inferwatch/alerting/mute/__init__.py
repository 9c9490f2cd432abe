"""Is this alert muted? Silences, inhibitions, the end of a silence, and the one mute stage they feed."""

from inferwatch.alerting.mute._inhibit import Inhibitor, InhibitRule, Muter
from inferwatch.alerting.mute._silence import Silence, Silences
from inferwatch.alerting.mute._silence_end import SilencedResolutions
from inferwatch.alerting.mute._stage import MuteStage

__all__ = ["InhibitRule", "Inhibitor", "MuteStage", "Muter", "Silence", "SilencedResolutions", "Silences"]
