/*
 * The LangBot page SDK: what a plugin's Page (an HTML page LangBot shows in an iframe)
 * uses to talk to LangBot and to its own plugin.
 *
 * LangBot serves this file at /api/v1/plugins/_sdk/page-sdk.js (from the installed
 * langbot_plugin package's assets). A page includes it and uses window.langbot:
 *
 *   langbot.onReady(function (ctx) { ... ctx.theme, ctx.language ... });
 *   langbot.api('/endpoint', body, 'POST').then(function (data) { ... });
 *   langbot.t('key', 'fallback');            // from ./i18n/<locale>.json
 *   langbot.onThemeChange(fn); langbot.onLanguageChange(fn); langbot.applyI18n();
 *   langbot.theme, langbot.language, langbot.ready
 *
 * The messages, exchanged with the parent window by postMessage:
 *   parent -> page  {type: 'langbot:context', theme: 'light'|'dark', language: 'en-US'}
 *   page -> parent  {type: 'langbot:api', requestId, endpoint, method, body}
 *   parent -> page  {type: 'langbot:api:response', requestId, data} or {..., error}
 * Only messages from the parent window are read. An api call that gets no answer in
 * 30 seconds fails with "Request timeout".
 *
 * Theme: <html> gets the class and data-theme 'light' or 'dark', and CSS variables
 * --langbot-bg, --langbot-bg-card, --langbot-text, --langbot-text-muted,
 * --langbot-border, --langbot-accent.
 *
 * i18n: ./i18n/<locale>.json next to the page (a language 'zh-Hans' reads zh_Hans.json,
 * falling back to en_US.json), a flat {key: text} object. An element with
 * data-i18n="key" gets the text as its content, or as the attribute named by
 * data-i18n-attr when that is one of placeholder, title, alt, aria-label,
 * aria-description (for any other name the text becomes the content: a translation
 * never becomes markup, a link or a handler).
 */
(function (global) {
  'use strict';

  var TIMEOUT_MS = 30000;
  var TEXT_ATTRIBUTES = ['placeholder', 'title', 'alt', 'aria-label', 'aria-description'];
  var PALETTES = {
    light: {
      bg: '#ffffff', 'bg-card': '#f8fafc', text: '#0a0a0a',
      'text-muted': '#71717a', border: '#e4e4e7', accent: '#2563eb'
    },
    dark: {
      bg: '#0a0a0a', 'bg-card': '#171717', text: '#fafafa',
      'text-muted': '#a1a1aa', border: '#27272a', accent: '#3b82f6'
    }
  };

  var state = {
    theme: 'light',
    language: 'en-US',
    contextSeen: false,
    i18nLoaded: false,
    translations: {},
    firstLoad: null
  };
  var listeners = { ready: [], theme: [], language: [] };
  var waiting = {};
  var sequence = 0;

  function each(callbacks, value) {
    callbacks.slice().forEach(function (callback) {
      try {
        callback(value);
      } catch (failure) {
        console.error(failure);
      }
    });
  }

  function context() {
    return { theme: state.theme, language: state.language };
  }

  function setTheme(theme) {
    var name = theme === 'dark' ? 'dark' : 'light';
    var root = document.documentElement;
    state.theme = name;
    root.classList.remove('light', 'dark');
    root.classList.add(name);
    root.setAttribute('data-theme', name);
    var palette = PALETTES[name];
    Object.keys(palette).forEach(function (key) {
      root.style.setProperty('--langbot-' + key, palette[key]);
    });
    each(listeners.theme, name);  // on every context message, the first one included
  }

  function translate() {
    var elements = document.querySelectorAll('[data-i18n]');
    Array.prototype.forEach.call(elements, function (element) {
      var text = state.translations[element.getAttribute('data-i18n')];
      if (text === undefined || text === null) return;
      var attribute = element.getAttribute('data-i18n-attr');
      if (attribute && TEXT_ATTRIBUTES.indexOf(attribute) >= 0) {
        element.setAttribute(attribute, String(text));
      } else {
        element.textContent = String(text);  // another attribute name: the text, as text
      }
    });
  }

  function readJson(name) {
    return fetch('./i18n/' + name + '.json').then(function (answer) {
      if (!answer.ok) return null;
      return answer.json();
    });
  }

  function loadTranslations(language) {
    var name = String(language).replace(/-/g, '_');
    return readJson(name)
      .then(function (found) {
        if (found === null && name !== 'en_US') return readJson('en_US');
        return found;
      })
      .catch(function () {
        return null;
      })
      .then(function (found) {
        var usable = found && typeof found === 'object' && !Array.isArray(found);
        state.translations = usable ? found : {};
        state.i18nLoaded = true;
        translate();
      });
  }

  function onContext(data) {
    var previous = state.language;
    if (typeof data.language === 'string' && data.language) state.language = data.language;
    setTheme(data.theme);
    if (!state.contextSeen) {
      state.contextSeen = true;
      state.firstLoad = loadTranslations(state.language).then(function () {
        var ready = listeners.ready;
        listeners.ready = [];
        each(ready, context());
      });
    } else if (previous !== state.language) {
      loadTranslations(state.language).then(function () {
        each(listeners.language, state.language);
      });
    }
  }

  function onAnswer(data) {
    var pending = waiting[data.requestId];
    if (!pending) return;
    delete waiting[data.requestId];
    clearTimeout(pending.timer);
    if (data.error) pending.reject(new Error(String(data.error)));
    else pending.resolve(data.data);
  }

  global.addEventListener('message', function (event) {
    if (event.source !== global.parent) return;
    var data = event.data;
    if (!data || typeof data !== 'object') return;
    if (data.type === 'langbot:context') onContext(data);
    else if (data.type === 'langbot:api:response') onAnswer(data);
  });

  function newRequestId() {
    sequence += 1;
    var crypto = global.crypto;
    var random = crypto && crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
    return 'req_' + sequence + '_' + random;
  }

  global.langbot = {
    get theme() { return state.theme; },
    get language() { return state.language; },
    get ready() { return state.contextSeen && state.i18nLoaded; },

    onReady: function (callback) {
      if (state.contextSeen && state.i18nLoaded) {
        each([callback], context());
      } else if (state.firstLoad) {
        state.firstLoad.then(function () { each([callback], context()); });
      } else {
        listeners.ready.push(callback);
      }
    },
    onThemeChange: function (callback) { listeners.theme.push(callback); },
    onLanguageChange: function (callback) { listeners.language.push(callback); },

    t: function (key, fallback) {
      var text = state.translations[key];
      if (text !== undefined && text !== null) return String(text);
      return fallback !== undefined ? fallback : key;
    },
    applyI18n: translate,

    api: function (endpoint, body, method) {
      return new Promise(function (resolve, reject) {
        var requestId = newRequestId();
        var timer = setTimeout(function () {
          if (!waiting[requestId]) return;
          delete waiting[requestId];
          reject(new Error('Request timeout'));
        }, TIMEOUT_MS);
        waiting[requestId] = { resolve: resolve, reject: reject, timer: timer };
        global.parent.postMessage({
          type: 'langbot:api',
          requestId: requestId,
          endpoint: endpoint,
          method: method || 'POST',
          body: body
        }, '*');
      });
    }
  };
})(window);
