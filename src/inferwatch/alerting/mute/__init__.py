"""Is this alert muted? Silences, inhibitions, time intervals, the end of a silence, and the mute stage."""

from inferwatch.alerting.mute._inhibit import Inhibitor, InhibitRule, Muter
from inferwatch.alerting.mute._silence import Silence, Silences
from inferwatch.alerting.mute._silence_end import SilencedResolutions
from inferwatch.alerting.mute._stage import MuteStage
from inferwatch.alerting.mute._time_interval import TimeIntervals, interval_holds

__all__ = ["InhibitRule", "Inhibitor", "MuteStage", "Muter", "Silence", "SilencedResolutions", "Silences",
           "TimeIntervals", "interval_holds"]
