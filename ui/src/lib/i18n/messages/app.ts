// The window's frame: the title, the page tabs, the language switch and the conveyor's
// connection badge; with the desktop notifications and the durations every page shares.

export const ru = {
  'app.title': 'Пульт',
  'nav.deepwork': 'Deepwork',
  'nav.review': 'Разбор',
  'nav.lines': 'Линии',
  'nav.settings': 'Настройки',
  'lang.label': 'Язык',

  'conn.starting': 'Конвейер: запуск…',
  'conn.connected': 'Конвейер подключён',
  'conn.unreachable': 'Конвейер недоступен',
  'conn.unauthorized': 'Конвейер: неверный токен',
  'conn.version_mismatch': 'Конвейер: другая версия',
  'conn.failed': 'Конвейер: ошибка',
  'conn.unknown': 'Конвейер: …',
  'conn.mode.embedded': 'встроенный',
  'conn.mode.remote': 'удалённый',

  'notify.question.title': 'Нужен ваш ответ',
  'notify.question.body': 'Новый вопрос в линии «{title}»',
  'notify.needs_human.title': 'Линии нужен человек',
  'notify.needs_human.body': '«{title}»: {reason}',
  'notify.ready.title': 'Можно принимать',
  'notify.ready.body': '«{title}» готова к приёмке',
  'notify.noReason': 'остановилась',

  'fmt.seconds': '{s} с',
  'fmt.bytes': '{n} байт',
  'fmt.kib': '{n} КБ',
  'fmt.mib': '{n} МБ',
  'fmt.minutes': '{m} мин {s} с',
  'fmt.hours': '{h} ч {m} мин',
};

export const en: Record<keyof typeof ru, string> = {
  'app.title': 'Pult',
  'nav.deepwork': 'Deepwork',
  'nav.review': 'Review',
  'nav.lines': 'Lines',
  'nav.settings': 'Settings',
  'lang.label': 'Language',

  'conn.starting': 'Conveyor: starting…',
  'conn.connected': 'Conveyor connected',
  'conn.unreachable': 'Conveyor unreachable',
  'conn.unauthorized': 'Conveyor: wrong token',
  'conn.version_mismatch': 'Conveyor: version mismatch',
  'conn.failed': 'Conveyor: failed',
  'conn.unknown': 'Conveyor: …',
  'conn.mode.embedded': 'embedded',
  'conn.mode.remote': 'remote',

  'notify.question.title': 'Your answer is needed',
  'notify.question.body': 'A new question in the line "{title}"',
  'notify.needs_human.title': 'A line needs a human',
  'notify.needs_human.body': '"{title}": {reason}',
  'notify.ready.title': 'Ready to accept',
  'notify.ready.body': '"{title}" is ready for acceptance',
  'notify.noReason': 'stopped',

  'fmt.seconds': '{s} s',
  'fmt.bytes': '{n} bytes',
  'fmt.kib': '{n} KB',
  'fmt.mib': '{n} MB',
  'fmt.minutes': '{m} min {s} s',
  'fmt.hours': '{h} h {m} min',
};
